"""Operator bundles: the exact bytes the C++ packer (common/bundle_tar.cc) makes.

The server addresses bundles by the sha256 of their bytes, so a bundle packed here
must be byte-identical to the CLI's, or the server's bundle cache is not shared
between the two. The C++ side writes a POSIX pax-restricted tar with libarchive;
this module reproduces its output for the entries npuperf writes:

- the regular files and directories under the operator directory, walked
  depth-first in directory order (the order errors are found in), then sorted by
  path components (``a/b`` before ``a-b``, as std::filesystem::path compares);
- ``.git``, ``__pycache__`` and ``.msprof`` anywhere, and ``docs/perf``, are
  skipped (outputs, not inputs); symlinks, sockets, FIFOs and devices are refused;
- mode 0755 for directories and owner-executable files, 0644 otherwise; uid and
  gid 0, no owner names, mtime 0;
- ustar headers, with a pax extended header (``dir/PaxHeader/name``) carrying
  ``path`` for names that are not ASCII (UTF-8, as the C++ packer writes them
  under its C.UTF-8 thread locale; names that are not UTF-8 get
  ``hdrcharset=BINARY`` first and are stored as their bytes) and for ASCII names
  that do not fit the ustar name and prefix fields; the ustar name of such an
  entry is libarchive's shortened one (3.6: at most 98 bytes in the name field);
- two zero blocks at the end, the whole padded to 10240-byte records.

``tests/python/test_bundle.py`` compares this with ``npuperf bundle pack`` on
every example operator and on trees with UTF-8 and non-UTF-8 names, long paths,
empty directories, executables, skipped folders and refused symlinks.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import stat
from typing import Iterator, List, Tuple, Union

from npuperf.errors import InvalidArgumentError, NotFoundError, ResourceExhaustedError

#: The largest bundle ``submit`` packs, as the CLI (client/commands.h kMaxBundleBytes).
MAX_BUNDLE_BYTES = 64 << 20

_BLOCK = 512
_RECORD = 10240  # libarchive's default bytes per block: output goes out in these
_SKIPPED_PARTS = (b".git", b"__pycache__", b".msprof")

PathLike = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]


@dataclasses.dataclass(frozen=True)
class Bundle:
    """A packed operator directory: its tar bytes and their sha256 (64 lowercase hex)."""

    name: str
    data: bytes
    sha256: str

    @property
    def size(self) -> int:
        return len(self.data)


def pack_bundle(path: PathLike, max_bytes: int = MAX_BUNDLE_BYTES) -> Bundle:
    """Packs the operator directory ``path`` exactly as ``npuperf submit`` does.

    Raises NotFoundError when ``path`` is not a directory, InvalidArgumentError for a
    symlink, socket, FIFO or device inside it (or an unreadable file), and
    ResourceExhaustedError past ``max_bytes``, with the C++ packer's messages.
    """
    root = os.fsencode(path)
    if not os.path.isdir(root):
        raise NotFoundError(f"operator directory {_show(root)} not found")
    entries = sorted(_entries(root), key=lambda rel: rel.split(b"/"))
    out = bytearray()
    for rel in entries:
        _add_entry(out, root, rel, max_bytes)
    out += bytes(2 * _BLOCK)
    out += bytes(-len(out) % _RECORD)
    data = bytes(out)
    normal = os.path.normpath(os.path.abspath(root))
    return Bundle(
        name=os.fsdecode(os.path.basename(normal)),
        data=data,
        sha256=hashlib.sha256(data).hexdigest(),
    )


def _show(path: bytes) -> str:
    return os.fsdecode(path)


def _skipped(rel: bytes) -> bool:
    if any(part in _SKIPPED_PARTS for part in rel.split(b"/")):
        return True
    return rel == b"docs/perf" or rel.startswith(b"docs/perf/")


def _entries(root: bytes) -> List[bytes]:
    """The relative paths of the bundle, in walk order (std::filesystem's
    recursive_directory_iterator: pre-order, readdir order)."""
    found: List[bytes] = []
    for full, rel, entry in _walk(root, b""):
        if _skipped(rel):
            continue
        if entry.is_symlink() or not (entry.is_file() or entry.is_dir()):
            raise InvalidArgumentError(
                f"{_show(full)}: bundles hold only regular files and directories"
            )
        found.append(rel)
    return found


def _walk(directory: bytes, prefix: bytes) -> Iterator[Tuple[bytes, bytes, os.DirEntry]]:
    with os.scandir(directory) as it:
        for entry in it:
            rel = prefix + entry.name
            full = os.path.join(directory, entry.name)
            yield full, rel, entry
            # A skipped directory is not entered; symlinks were refused above.
            if entry.is_dir(follow_symlinks=False) and not _skipped(rel):
                yield from _walk(full, rel + b"/")


def _add_entry(out: bytearray, root: bytes, rel: bytes, max_bytes: int) -> None:
    full = os.path.join(root, rel)
    is_dir = os.path.isdir(full)
    content = b""
    if not is_dir:
        try:
            with open(full, "rb") as f:
                content = f.read()
        except OSError:
            raise InvalidArgumentError(f"{_show(full)}: cannot be read") from None
        # libarchive hands its output over in whole records: the C++ check
        # sees only the records written so far.
        if len(out) // _RECORD * _RECORD + len(content) > max_bytes:
            raise ResourceExhaustedError(f"bundle of {_show(root)} exceeds {max_bytes} bytes")
    executable = bool(os.stat(full).st_mode & stat.S_IXUSR)
    perm = 0o755 if is_dir or executable else 0o644
    out += _headers(rel + b"/" if is_dir else rel, is_dir, perm, len(content))
    out += content
    out += bytes(-len(content) % _BLOCK)


# ---- libarchive's pax-restricted writer, for the entries above ------------
# (archive_write_set_format_pax.c and archive_write_set_format_ustar.c, 3.6)


def _headers(path: bytes, is_dir: bool, perm: int, size: int) -> bytes:
    """The pax extended header (when needed) and the ustar header of one entry."""
    pax = b""
    ustar_name = path
    if _has_non_ascii(path):
        if not _is_utf8(path):
            # libarchive cannot convert it to UTF-8: the header switches to
            # binary and the name is stored as its bytes.
            pax += _pax_attr(b"hdrcharset", b"BINARY")
        pax += _pax_attr(b"path", path)
        ustar_name = _ustar_entry_name(path, None)
    elif len(path) > 100 and not _fits_ustar(path):
        pax += _pax_attr(b"path", path)
        ustar_name = _ustar_entry_name(path, None)
    main = _ustar_header(ustar_name, b"5" if is_dir else b"0", perm, 0 if is_dir else size)
    if not pax:
        return main
    x = _ustar_header(_pax_attribute_name(ustar_name), b"x", perm, len(pax))
    return x + pax + bytes(-len(pax) % _BLOCK) + main


def _is_utf8(s: bytes) -> bool:
    try:
        s.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _has_non_ascii(s: bytes) -> bool:
    return any(b >= 0x80 for b in s)


def _fits_ustar(path: bytes) -> bool:
    """An ASCII path over 100 bytes fits when it splits at a '/' into a prefix
    of at most 155 and a non-empty name of at most 100 bytes."""
    suffix = path.find(b"/", len(path) - 100 - 1)
    if suffix == 0:
        suffix = path.find(b"/", 1)
    return not (suffix < 0 or suffix + 1 == len(path) or suffix > 155)


def _pax_attr(key: bytes, value: bytes) -> bytes:
    length = 1 + len(key) + 1 + len(value) + 1
    digits = len(str(length))
    if length + digits >= 10**digits:
        digits += 1
    return str(length + digits).encode() + b" " + key + b"=" + value + b"\n"


def _octal(value: int, width: int) -> bytes:
    if value < 0 or value >= 8**width:
        raise ResourceExhaustedError(f"a tar field cannot hold {value}")
    return format(value, "o").rjust(width, "0").encode()


def _ustar_header(name: bytes, typeflag: bytes, perm: int, size: int) -> bytes:
    h = bytearray(_BLOCK)
    if len(name) <= 100:
        h[0 : len(name)] = name
    else:
        cut = name.find(b"/", len(name) - 100 - 1)
        if cut == 0:
            cut = name.find(b"/", 1)
        if cut < 0 or cut + 1 == len(name) or cut > 155:
            raise InvalidArgumentError(f"pack {_show(name)}: Pathname too long")
        h[345 : 345 + cut] = name[:cut]
        rest = name[cut + 1 :]
        h[0 : len(rest)] = rest
    h[100:108] = _octal(perm & 0o7777, 6) + b" \0"
    h[108:116] = b"000000 \0"  # uid
    h[116:124] = b"000000 \0"  # gid
    h[124:136] = _octal(size, 11) + b" "
    h[136:148] = b"00000000000 "  # mtime 0
    h[148:156] = b"        "
    h[156:157] = typeflag
    h[257:265] = b"ustar\x0000"
    h[329:337] = b"000000 \0"  # rdevmajor
    h[337:345] = b"000000 \0"  # rdevminor
    checksum = sum(h)
    h[148:156] = _octal(checksum, 6) + b"\0 "
    return bytes(h)


def _at(s: bytes, i: int) -> int:
    """s[i], or the C string's terminating NUL past its end."""
    return s[i] if 0 <= i < len(s) else 0


_SLASH, _DOT = ord("/"), ord(".")


def _ustar_entry_name(src: bytes, insert: "bytes | None") -> bytes:
    """build_ustar_entry_name(): a name that fits the ustar fields, keeping the
    leading directories, an optional inserted directory, and the filename start."""
    if len(src) < 100 and insert is None:
        return src
    insert_length = 0 if insert is None else len(insert) + 2
    suffix_length = 98  # libarchive 3.6 leaves one byte more than the 99 its comment says
    need_slash = False
    filename_end = len(src)
    while True:  # drop trailing "/" and "/."
        if filename_end > 0 and src[filename_end - 1] == _SLASH:
            filename_end -= 1
            need_slash = True
            continue
        if filename_end > 1 and src[filename_end - 1] == _DOT and src[filename_end - 2] == _SLASH:
            filename_end -= 2
            need_slash = True
            continue
        break
    if need_slash:
        suffix_length -= 1
    filename = max(filename_end - 1, 0)
    while filename > 0 and src[filename] != _SLASH:
        filename -= 1
    if _at(src, filename) == _SLASH and filename < filename_end - 1:
        filename += 1
    suffix_length -= insert_length
    filename_end = min(filename_end, filename + suffix_length)
    suffix_length -= filename_end - filename
    prefix_end = min(155, filename)
    while prefix_end > 0 and _at(src, prefix_end) != _SLASH:
        prefix_end -= 1
    if prefix_end < filename and _at(src, prefix_end) == _SLASH:
        prefix_end += 1
    suffix = prefix_end
    suffix_end = max(min(suffix + suffix_length, filename), suffix)
    while suffix_end > suffix and _at(src, suffix_end) != _SLASH:
        suffix_end -= 1
    if suffix_end < filename and _at(src, suffix_end) == _SLASH:
        suffix_end += 1
    dest = src[:prefix_end] + src[suffix:suffix_end]
    if insert is not None:
        dest += insert + b"/"
    dest += src[filename:filename_end]
    return dest + b"/" if need_slash else dest


def _pax_attribute_name(src: bytes) -> bytes:
    """build_pax_attribute_name(): "dir/PaxHeader/name" within the ustar limits."""
    if not src:
        return b"PaxHeader/blank"
    end = len(src)
    while True:
        if end > 0 and src[end - 1] == _SLASH:
            end -= 1
            continue
        if end > 1 and src[end - 1] == _DOT and src[end - 2] == _SLASH:
            end -= 1
            continue
        break
    if end == 0:
        return b"/PaxHeader/rootdir"
    if src[0] == _DOT and end == 1:
        return b"PaxHeader/currentdir"
    return _ustar_entry_name(src[:end], b"PaxHeader")

"""Trees and diffs: what a commit contains and what changed between two commits.

Map:
  TreeEntry(path, mode, oid)     one ls-tree row (gitlinks included, mode 160000)
  ls_tree(commit)                every entry, recursive, repo-relative paths
  reads_digest(commit, match)    sha256 of canonical JSON of sorted [path, mode, oid] of matching entries
  show(commit, path)             blob bytes, None when absent (or not a blob); buffered, so bounded
  changed_paths(a, b)            diff --name-only --no-renames
  patch_sha(a, b)                sha256 of the exact bytes of the binary full-index diff, streamed
  changed_blob_sizes(a, b)       [(path, size)] of added/changed blobs, from metadata only

Byte-stable diffs: `patch` is a content key, so two machines must hash identical bytes for identical commits.
The diff calls therefore pin every option a user's or repo's config could change (prefixes, context,
algorithm, order file, external/textconv drivers, colour, relative paths, submodule format, path quoting)
to git's defaults. Under a default config the bytes equal plain
`git diff --binary --full-index --no-renames a b`. The hash covers the exact bytes (reference spec §4); the
TypeScript original hashed the diff after UTF-8 decoding with replacement characters, so the two differ
only for diffs that are not valid UTF-8, and owed ledgers never mix the two.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from owed.canon import digest
from owed.gitops.base import RepoBase, decode_path, encode_path
from owed.gitops.proc import GitError

# Config that changes diff bytes, overridden for every diff call (see the module docstring).
_DIFF_CONFIG = ["-c", "core.quotePath=true", "-c", "diff.suppressBlankEmpty=false"]
_DIFF_OPTS = [
    "--no-ext-diff",
    "--no-textconv",
    "--no-color",
    "--no-relative",
    "--ignore-submodules=none",
    "--submodule=short",
    "-O/dev/null",
    "--no-renames",
]
_PATCH_OPTS = [
    "--src-prefix=a/",
    "--dst-prefix=b/",
    "--unified=3",
    "--inter-hunk-context=0",
    "--diff-algorithm=myers",
    "--indent-heuristic",
    "--binary",
    "--full-index",
]
GITLINK = "160000"


class TreeEntry(NamedTuple):
    path: str
    mode: str
    oid: str


def _json_path(path: str) -> str:
    # Canonical JSON holds only valid Unicode: an undecodable name hashes with U+FFFD in its place.
    return encode_path(path).decode("utf-8", "replace")


class TreesMixin(RepoBase):
    def ls_tree(self, commit: str) -> list[TreeEntry]:
        out = self._git(["ls-tree", "-r", "-z", "--full-tree", commit]).out
        entries = []
        for rec in out.split(b"\0"):
            if not rec:
                continue
            meta, _, path = rec.partition(b"\t")
            mode, _type, oid = meta.decode().split(" ")
            entries.append(TreeEntry(decode_path(path), mode, oid))
        return entries

    def reads_digest(self, commit: str, match: Callable[[str], bool]) -> str:
        """Content identity of the matching files of `commit`: path, mode (exec bit, symlink) and blob."""
        rows = sorted((e for e in self.ls_tree(commit) if match(e.path)), key=lambda e: encode_path(e.path))
        return digest([[_json_path(e.path), e.mode, e.oid] for e in rows])

    def entry(self, commit: str, path: str) -> TreeEntry | None:
        """The tree entry at exactly `path` in `commit` (a file, symlink, gitlink or tree), or None."""
        path = path.strip("/")
        if not path:
            return None
        r = self._git(["--literal-pathspecs", "ls-tree", "-z", "--full-tree", commit, "--", path])
        for rec in r.out.split(b"\0"):
            meta, _, raw = rec.partition(b"\t")
            if rec and decode_path(raw) == path:
                mode, _type, oid = meta.decode().split(" ")
                return TreeEntry(path, mode, oid)
        return None

    def show(self, commit: str, path: str) -> bytes | None:
        e = self.entry(commit, path)
        if e is None or e.mode in (GITLINK, "040000"):
            return None
        return self._git(["cat-file", "blob", e.oid]).out

    def changed_paths(self, a: str, b: str) -> list[str]:
        out = self._git([*_DIFF_CONFIG, "diff", *_DIFF_OPTS, "--name-only", "-z", a, b, "--"]).out
        return [decode_path(p) for p in out.split(b"\0") if p]

    def changed_paths_many(self, pairs: list[tuple[str, str]]) -> list[list[str]]:
        """`changed_paths(a, b)` of every (a, b) pair of commits in one `git diff-tree --stdin` (a batch's
        member links): each pair's section starts with its `b` (`--always`: also when nothing changed)."""
        if not pairs:
            return []
        feed = "".join(f"{b} {a}\n" for a, b in pairs).encode()
        out = self._git([*_DIFF_CONFIG, "diff-tree", "--stdin", "--always", "-r", "--name-only", "-z", *_DIFF_OPTS],
                        input=feed).out
        tokens = [t for t in out.split(b"\0") if t]
        result: list[list[str]] = []
        k = 0
        for t in tokens:
            if k < len(pairs) and t.decode("ascii", "replace") == pairs[k][1]:
                result.append([])
                k += 1
            elif result:
                result[-1].append(decode_path(t))
        if k != len(pairs):
            raise GitError(f"git diff-tree --stdin answered {k} of {len(pairs)} pairs")
        return result

    def patch_sha(self, a: str, b: str) -> str:
        """sha256 of `git diff --binary --full-index --no-renames a b`, hashed as it streams (never buffered)."""
        import hashlib  # a whole patch: OpenSSL's sha256 (owed/canon.py keeps it off read paths)

        h = hashlib.sha256()
        self._stream([*_DIFF_CONFIG, "diff", *_DIFF_OPTS, *_PATCH_OPTS, a, b, "--"], h.update)
        return h.hexdigest()

    def changed_blob_sizes(self, a: str, b: str) -> list[tuple[str, int]]:
        """Full sizes of the blobs b holds at paths changed since a (mode-only changes included).

        Deleted paths and gitlinks contribute nothing. Sizes come from object headers
        (`cat-file --batch-check`), so no content is read however large a file is.
        """
        out = self._git([*_DIFF_CONFIG, "diff", *_DIFF_OPTS, "--raw", "-z", "--no-abbrev", a, b, "--"]).out
        fields = out.split(b"\0")
        wanted: list[tuple[str, str]] = []
        for i in range(0, len(fields) - 1, 2):
            meta = fields[i].decode()
            if not meta.startswith(":"):
                continue
            _old_mode, new_mode, _old_oid, new_oid, status = meta[1:].split(" ")
            if status.startswith("D") or new_mode == GITLINK:
                continue
            wanted.append((decode_path(fields[i + 1]), new_oid))
        sizes = self._object_sizes({oid for _, oid in wanted})
        return [(path, sizes[oid]) for path, oid in wanted]

    def _object_sizes(self, oids: set[str]) -> dict[str, int]:
        if not oids:
            return {}
        fmt = "--batch-check=%(objectname) %(objectsize)"
        out = self._git(["cat-file", fmt], input="".join(f"{o}\n" for o in sorted(oids)).encode()).out
        sizes = {}
        for line in out.decode().splitlines():
            oid, _, size = line.partition(" ")
            if size == "missing" or not size.isdigit():
                raise GitError(f"git cat-file: object {oid} is missing from the repository")
            sizes[oid] = int(size)
        return sizes

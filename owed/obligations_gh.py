"""Reading the world through `gh` (helper of `owed.obligations`): the listing path only.

Map:
  GhUnavailable           the world could not be read; owed() turns it into `listed: False`
  gh_issues(...)          the default issues_source: one filtered, capped `gh search issues`
  configured_owners(...)  OPENLOOPS_OWNERS / OWED_OWNERS, else the `gh owe` alias, else the gh login
  split_owners(text)      comma- or space-separated owners, de-duplicated, order kept
  _gh(args, timeout)      one `gh` call; every failure becomes GhUnavailable

`gh` is a trusted tool, not a predicate, and its JSON must arrive whole (runner/ keeps only a
bounded tail of output), so it is called with subprocess rather than through runner/ -- still in its
own process group, killed as a group at the timeout and then reaped.

Read only, by construction: with owners given (or in OPENLOOPS_OWNERS / OWED_OWNERS) the listing is
exactly one `gh search issues` filtered by owner, label and state; resolving owners otherwise adds
`gh alias list` and `gh api user --jq .login`, both reads. Nothing here calls any other gh subcommand.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
from typing import Any

ISSUE_JSON_FIELDS = ("body", "createdAt", "number", "repository", "title", "url")
# `gh search` stops at 1000 results; a larger cap would be a promise gh cannot keep.
SEARCH_CAP = 1000
# owed() asks for one row more than it reports, so its own cap stops one short of gh's.
MAX_LIMIT = SEARCH_CAP - 1
# After the kill at a timeout, how long to wait for gh's pipes to close before giving up on them.
REAP_S = 2.0
OWNER_VARS = ("OPENLOOPS_OWNERS", "OWED_OWNERS")


class GhUnavailable(RuntimeError):
    """The world could not be read: no `gh`, no credentials, no network, a timeout.

    Raised only by the listing path, and never propagated to a caller of `owed()` -- it
    becomes `listed: False` plus an `error`, which every surface must render as `?`.
    Turning it into an empty list would be the one unrecoverable bug here.
    """


def gh_issues(
    *,
    owners: tuple[str, ...] | list[str],
    label: str = "manual-task",
    state: str = "open",
    limit: int = 50,
    timeout: float = 30.0,
) -> list[dict[str, Any]]:
    """The default `issues_source`: the open `manual-task` issues, from `gh`.

    This is a *filtered* search, not an enumeration -- the label is applied server-side and
    the result is capped -- which is the only form of search this package is allowed to use.
    Walking a whole fleet's issues through the search API silently returns wrong answers past
    its first thousand results; that job belongs to per-repo listing.

    Returns whatever `gh` returned, unparsed and unjudged: a list of dicts with `createdAt`,
    `number`, `repository`, `title`, `url` and `body`.
    """
    owners = tuple(o for o in owners if o)
    if not owners:
        # An owner-less search is a search of all of GitHub: never the caller's intent.
        raise GhUnavailable("no owners to search: set OPENLOOPS_OWNERS or pass owners")
    if not 1 <= limit <= SEARCH_CAP:
        raise ValueError(f"limit must be between 1 and {SEARCH_CAP}, got {limit}")
    args = ["search", "issues"]
    for owner in owners:
        args += ["--owner", owner]
    args += ["--label", label, "--state", state, "--limit", str(limit), "--json", ",".join(ISSUE_JSON_FIELDS)]
    out = _gh(args, timeout)
    try:
        issues = json.loads(out)
    except ValueError:
        raise GhUnavailable("gh search issues printed something that is not JSON") from None
    if not isinstance(issues, list):
        raise GhUnavailable(f"gh search issues returned a JSON {type(issues).__name__}, not a list")
    return issues


def configured_owners(*, timeout: float = 30.0) -> tuple[str, ...]:
    """Whose repositories to search, resolved once.

    Three sources, in order, first one wins: `OPENLOOPS_OWNERS` (comma- or space-separated;
    `OWED_OWNERS` is read when it is unset); the owners named by the `gh owe` alias if one is
    installed, because a fleet is usually already written down there and disagreeing with it
    is how a count goes quietly wrong; and failing both, the login `gh` is authenticated as.
    Raises GhUnavailable when none of them names anyone.

    >>> import os
    >>> os.environ['OPENLOOPS_OWNERS'] = 'acme, widgets co'
    >>> configured_owners()
    ('acme', 'widgets', 'co')
    >>> del os.environ['OPENLOOPS_OWNERS']
    """
    for var in OWNER_VARS:
        owners = split_owners(os.environ.get(var, ""))
        if owners:
            return owners
    try:
        owners = alias_owners(_gh(["alias", "list"], timeout))
    except GhUnavailable:
        owners = ()  # no aliases is not an error; the login below says whether gh works
    if owners:
        return owners
    try:
        login = _gh(["api", "user", "--jq", ".login"], timeout).strip()
    except GhUnavailable as e:
        raise GhUnavailable(f"no owners configured (set OPENLOOPS_OWNERS) and {e}") from None
    if not login:
        raise GhUnavailable("no owners configured (set OPENLOOPS_OWNERS) and gh reported no login")
    return (login,)


def split_owners(text: str) -> tuple[str, ...]:
    """Owners from a comma- or space-separated string, de-duplicated, order kept.

    >>> split_owners(' acme,, widgets  acme ')
    ('acme', 'widgets')
    """
    seen: dict[str, None] = {}
    for part in text.replace(",", " ").split():
        seen.setdefault(part, None)
    return tuple(seen)


def alias_owners(alias_list: str) -> tuple[str, ...]:
    """The owners the `owe` alias searches, from `gh alias list` output.

    gh prints `name: expansion` (YAML, gh 2.x) or, in older releases and through a pipe,
    `name<TAB>expansion`; both are read.

    >>> listing = "co: pr checkout" + chr(10) + "owe: search issues --owner acme --owner=widgets --label manual-task"
    >>> alias_owners(listing)
    ('acme', 'widgets')
    >>> alias_owners("owe: '!gh search issues user:acme org:widgets label:manual-task'")
    ('acme', 'widgets')
    >>> alias_owners("co" + chr(9) + "pr checkout" + chr(10) + "owe" + chr(9) + "search issues --owner acme")
    ('acme',)
    """
    for line in alias_list.splitlines():
        name, sep, expansion = line.partition("\t")
        if not sep or ":" in name:
            name, sep, expansion = line.partition(":")
        if sep and name.strip() == "owe":
            return _owners_in(_unquote(expansion.strip()))
    return ()


def _unquote(text: str) -> str:
    # `gh alias list` prints YAML: single-quoted values double their inner quotes.
    if len(text) >= 2 and text[0] == text[-1] == "'":
        return text[1:-1].replace("''", "'")
    if len(text) >= 2 and text[0] == text[-1] == '"':
        return text[1:-1]
    return text


def _owners_in(expansion: str) -> tuple[str, ...]:
    try:
        tokens = shlex.split(expansion.lstrip("!"))
    except ValueError:
        tokens = expansion.lstrip("!").split()
    found: list[str] = []
    for i, token in enumerate(tokens):
        if token == "--owner" and i + 1 < len(tokens):
            found.append(tokens[i + 1])
        elif token.startswith("--owner="):
            found.append(token.split("=", 1)[1])
        else:
            for words in token.split():  # a quoted query string holds several qualifiers
                key, sep, value = words.partition(":")
                if sep and key in ("owner", "user", "org"):
                    found.append(value)
    return split_owners(",".join(found))


def _gh(args: list[str], timeout: float) -> str:
    """stdout of `gh <args>`; a missing gh, a timeout or a non-zero exit is GhUnavailable.

    gh runs in a new session (its own process group); at the timeout the whole group is killed
    and gh reaped, so nothing it started outlives the call.
    """
    env = dict(os.environ, GH_PROMPT_DISABLED="1", GH_NO_UPDATE_NOTIFIER="1", NO_COLOR="1")
    what = "gh " + " ".join(args[:2])
    from runner.boundary import refuse_spawn

    refuse_spawn(what)  # the lock boundary
    try:
        proc = subprocess.Popen(
            ["gh", *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            env=env,
            start_new_session=True,
        )
    except FileNotFoundError:
        raise GhUnavailable("gh not found on PATH") from None
    except OSError as e:
        raise GhUnavailable(f"{what} could not start: {e.strerror or e}") from None
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        raise GhUnavailable(f"{what} timed out after {timeout:g}s") from None
    except BaseException:
        _kill_group(proc)  # interrupted (Ctrl-C): gh must not outlive us either
        raise
    if proc.returncode != 0:
        detail = next((ln.strip() for ln in stderr.splitlines() if ln.strip()), "no message")
        raise GhUnavailable(f"{what} failed (exit {proc.returncode}): {detail}")
    return stdout


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL gh's process group, then reap gh; bounded even if something holds its pipes open."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.communicate(timeout=REAP_S)
    except subprocess.TimeoutExpired:
        # A grandchild that left the group still holds a pipe: stop reading it, reap gh itself.
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
        proc.wait(timeout=REAP_S)
    # Once this process is a subreaper (any measurement through runner/ makes it one), gh's own children
    # killed with its session re-parent to us as zombies: reap them too.
    from runner import guard

    guard.sweep("", deadline_s=REAP_S, pgid=proc.pid)

"""Helpers the tests share (one package, imported as `tests.helpers.<module>`).

- cli.py     `Cli`: the real CLI in this process (`owed.cli.main(argv)`), or in a child process where
             processes are the point; both give a `subprocess.CompletedProcess`
- procs.py   the process table: `marked(text)`, `survivors(text)`, `alive(pid)`, `marker()`
- ledger.py  what a ledger file holds: `entries(repo)`, `entries_of(path)`
"""

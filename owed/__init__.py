"""owed: an acceptance ledger for multi-agent task graphs in one Git repository.

No receipt, not done. See docs/ and README.md; the package map is in docs/DESIGN.md.
"""

__version__ = "0.1.0"

from owed.cli import main

raise SystemExit(main())

from __future__ import annotations

from selfcorrect_action.cli import main

raise SystemExit(main())

"""selfcorrect: plain-language task in, a Python script shown to work out."""

from __future__ import annotations

__version__ = "0.1.0"

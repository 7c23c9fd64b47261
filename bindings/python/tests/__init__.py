# SPDX-License-Identifier: MIT
"""The binding's tests: `python3 -m unittest` in bindings/python finds them
(this package), as does `python3 -m unittest discover -s tests` (run-tests).
The modules import their helpers (_table) as top-level modules either way."""

import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
if _here not in sys.path:
    sys.path.insert(0, _here)

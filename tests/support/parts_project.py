"""A small project whose inputs only a data file knows: parts named by codes such as `XK-4471`.

Neither random strings nor the literals of its source reach a known code, so whatever finds a
change in `describe` got the code from the project's tests or examples (carving)."""

CODES = """\
import json
from pathlib import Path



def describe(code: str) -> str:
    names = json.loads((Path(__file__).parent / "codes.json").read_text())
    return f"{code}: {names[code]}"
"""
# head writes a dash where base wrote a colon
CODES_BROKEN = CODES.replace('f"{code}: {names[code]}"', 'f"{code} - {names[code]}"')
CODES_DATA = '{"XK-4471": "left valve", "QZ-0982": "right valve"}\n'
PARTS = {"parts/__init__.py": "", "parts/codes.py": CODES, "parts/codes.json": CODES_DATA}

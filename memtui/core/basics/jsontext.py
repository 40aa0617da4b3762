"""JSON anyone may have written: `json.loads`, with text nested too deep to parse refused as the JSONDecodeError
its readers already catch. (`json` raises RecursionError on `[[[[…` a few thousand deep, which no reader caught:
one such line in the audit log ended every sync of the app.)"""

from __future__ import annotations

import json
from typing import Any


def loads(data: str | bytes | bytearray) -> Any:
    try:
        return json.loads(data)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply to read", "", 0) from None

"""mdmem: long-term memory over plain Markdown notes, indexed in SQLite for hybrid search."""

from .api import Memory
from .errors import MdmemError
from .models import Hit

__all__ = ["Memory", "MdmemError", "Hit"]
__version__ = "0.1.0"

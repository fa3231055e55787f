"""Token usage and cost (issue 44 item 1): what every session's model responses used, by day,
week, month, session, project, model and harness.

``extract`` knows where each harness records usage (Claude Code ``message.usage``, Codex
``token_count`` events, pi, OpenCode and Kilo usage, Gemini CLI ``tokens``, Qwen Code
``usageMetadata``, Copilot CLI ``session.usage_record`` events) and de-duplicates as each
requires (Factory Droid's and Cursor's files record none); ``prices``
holds the price table (LiteLLM's, trimmed, shipped as ``prices.json``; refreshable into the
workspace); ``report`` reads the stored sessions' raw lines, prices each message and groups
them (``usage_report``, ``group``, ``breakdown``).

May import: ``core``, ``store`` (layer 3, beside ``formats``, which it does not import).

The names below are re-exported lazily (``continuity.core.exports``): importing the package
loads none of its modules.
"""

from continuity.core.exports import lazy_exports

_EXPORTS = {
    "GROUPS": "report",
    "MessageUsage": "extract",
    "PriceTable": "prices",
    "USAGE_HARNESSES": "extract",
    "UsageReader": "extract",
    "UsageReport": "report",
    "UsageRow": "report",
    "UsageTotals": "report",
    "breakdown": "report",
    "collect": "report",
    "group": "report",
    "load_prices": "prices",
    "price": "report",
    "refresh": "prices",
    "summarize": "report",
    "totals": "report",
    "usage_report": "report",
}

# The names as a type checker sees them; at run time ``__getattr__`` loads each on first
# use (tests/core/test_exports.py checks the two lists agree).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from continuity.usage.extract import (
        USAGE_HARNESSES,
        MessageUsage,
        UsageReader,
    )
    from continuity.usage.prices import (
        PriceTable,
        load_prices,
        refresh,
    )
    from continuity.usage.report import (
        GROUPS,
        UsageReport,
        UsageRow,
        UsageTotals,
        breakdown,
        collect,
        group,
        price,
        summarize,
        totals,
        usage_report,
    )

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

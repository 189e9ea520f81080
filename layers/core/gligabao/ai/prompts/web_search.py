"""Stage `web_search`: the latest world events about one entity, found with the model's web search
tool (ai/web_search.py makes the call).

The user message carries what the gligabao server's does (a `<today>`, the `<query>` and the
`<entity>`), so that an entity is searched for the same way; the instructions are our own.
"""

from __future__ import annotations

from datetime import date

WEB_SEARCH_MAX_TOKENS = 1500
# The model's whole answer when it found nothing worth remembering.
NO_RESULTS = "NO_RESULTS"

SYSTEM = (
    "You find recent news about one entity for a long-term memory, with the web search tool.\n"
    "\n"
    "<entity> names the entity, <query> says what to look for and <today> is the date. Search for "
    "what has happened to or around the entity lately that matters: what it announced, agreed, "
    "launched, reported or lost, who joined or left it, court and regulator decisions, disputes and "
    "disasters. Prefer recent events and sources that can be trusted.\n"
    "\n"
    "Answer with plain text only, at most 300 words: short factual sentences that each stand on "
    "their own, with no heading, list, markdown or word about how you searched. Each sentence says "
    "when it happened (the date, month or year the source gives) and names every person, "
    "organization and place by its full name, the entity included, never by a pronoun. Write only "
    "what the results say.\n"
    "\n"
    f"When nothing relevant and recent is found, answer exactly: {NO_RESULTS}"
)


def search_query(name: str, entity_type: str) -> str:
    """What is searched for about an entity; also the query stored on the artifact it yields."""
    return f"latest world events and news about {name} ({entity_type})"


def user_message(name: str, entity_type: str, description: str, today: date) -> str:
    return (
        f"<today>{today.isoformat()}</today>\n"
        f"<query>{search_query(name, entity_type)}</query>\n"
        "<entity>\n"
        f"name: {name}\n"
        f"type: {entity_type}\n"
        f"description: {description.strip() or '(none)'}\n"
        "</entity>"
    )

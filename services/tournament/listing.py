"""ListTournaments in pages.

The tournaments in play (no status asked, or REGISTRATION / RUNNING) are as many as the house holds: listed
whole unless a page is asked for. Those over (FINISHED, CANCELLED) grow with every tournament ever run —
some 150 B each, in one message: past about 27,000 the answer no longer fits gRPC's 4 MB and every such call
failed — so they come in pages. A page lists tournaments by id, after the one its token names: the house's
(over within their retention window) merged with the store's page of the forgotten ones
(:meth:`tournament.store.TournamentStore.forgotten_page`, read by status and id: the page's rows only).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterable, Iterator

from cardroom.core import ids
from cardroom.runtime import errors
from cardroom.v1 import tournament_pb2 as pb

#: A listing of the tournaments over with no page size asked for: this many a page.
DEFAULT_PAGE = 100
#: A page size asked above this gets this many.
MAX_PAGE = 1000
IN_PLAY = frozenset({pb.TOURNAMENT_STATUS_UNSPECIFIED, pb.TOURNAMENT_STATUS_REGISTRATION, pb.TOURNAMENT_STATUS_RUNNING})


def page_size(status: int, asked: int, token: str) -> int | None:
    """How many one page lists; None: every one (the tournaments in play, no page asked for)."""
    if asked < 0:
        raise errors.invalid(f"page_size: {asked} is negative (0: the default)", field="page_size")
    if asked == 0:
        return None if status in IN_PLAY and not token else DEFAULT_PAGE
    return min(asked, MAX_PAGE)


def after(token: str) -> str:
    """The tournament id the page before ended at ("": the first page)."""
    if token and not ids.is_tournament_id(token):
        raise errors.invalid(
            "page_token: not a token this service gave (send next_page_token back)", field="page_token"
        )
    return token


def page(listed: Iterable[pb.TournamentInfo], size: int) -> tuple[list[pb.TournamentInfo], str]:
    """The first ``size`` of ``listed`` (in id order) and the next page's token ("": nothing after)."""
    taken = list(itertools.islice(listed, size + 1))
    if len(taken) > size:
        return taken[:size], taken[size - 1].tournament_id
    return taken, ""


def merged(*listed: Iterable[pb.TournamentInfo]) -> Iterator[pb.TournamentInfo]:
    """Listings each in id order (the store's page of the forgotten, the house's) as one in id order."""
    return heapq.merge(*listed, key=lambda info: info.tournament_id)

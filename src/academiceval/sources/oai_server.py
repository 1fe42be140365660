"""The OAI-PMH side of `mirror serve` (`/oai2`, like arXiv's endpoint): bulk metadata out of a mirror index.

Verbs: Identify, ListMetadataFormats, ListSets, ListRecords, ListIdentifiers, GetRecord. Metadata format:
arXiv's own `arXiv` (`http://arxiv.org/OAI/arXiv/`): it carries what the project needs — the v1 date
(`created`), categories as codes, authors split into keyname/forenames — which `oai_dc` does not (its dates
are unlabelled version dates and its subjects are category *names*), so `oai_dc` is answered with
`cannotDisseminateFormat`.

Selection is arXiv's: `from`/`until` compare the record's datestamp (day granularity; here the date of the
latest version, else v1), `set` is `group:archive` (`physics:astro-ph`, `cs`, `math`, ...) or
`group:archive:SUB` (`physics:astro-ph:GA`). Resumption tokens are stateless (base64 JSON of the request and
the cursor); an undecodable one gets `badResumptionToken`. Errors come as OAI `<error code=...>` with HTTP 200,
as the protocol says; flow control (HTTP 503 + Retry-After) is a fault of the server (`server.py`).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from datetime import UTC, date, datetime
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from academiceval.sources.errors import InvalidArxivIdError
from academiceval.sources.ids import parse_arxiv_id
from academiceval.sources.mirror.records import MirrorRecord
from academiceval.sources.query import Node, and_, cat, or_, updated_between

OAI_NS = "http://www.openarchives.org/OAI/2.0/"
ARXIV_NS = "http://arxiv.org/OAI/arXiv/"
PAGE_SIZE = 1000
PHYSICS = ("astro-ph", "cond-mat", "gr-qc", "hep-ex", "hep-lat", "hep-ph", "hep-th", "math-ph", "nlin",
           "nucl-ex", "nucl-th", "physics", "quant-ph")  # fmt: skip
GROUPS = ("cs", "econ", "eess", "math", "q-bio", "q-fin", "stat")
SUFFIXES = {"jr", "sr", "ii", "iii", "iv"}
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}:\d{2}Z)?$")


class OaiError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def set_spec(category: str) -> str:
    archive = category.split(".")[0]
    return f"physics:{archive}" if archive in PHYSICS else archive


def set_query(spec: str) -> Node:
    parts = spec.split(":")
    if parts == ["physics"]:
        return or_(*[cat(a) for a in PHYSICS])
    if parts[0] == "physics" and len(parts) >= 2:
        parts = parts[1:]
    if len(parts) == 1:
        return cat(parts[0])
    if len(parts) == 2:
        return cat(f"{parts[0]}.{parts[1]}")
    raise OaiError("badArgument", f"unknown set {spec!r}")


def _parse_date(value: str | None, *, end: bool) -> datetime | None:
    if value is None:
        return None
    try:
        if not _DATE.match(value):
            raise ValueError("not YYYY-MM-DD")
        d = date.fromisoformat(value[:10])
    except ValueError as e:
        raise OaiError("badArgument", f"illegal date {value!r}: {e}; use YYYY-MM-DD") from e
    return datetime(d.year, d.month, d.day, 23 if end else 0, 59 if end else 0)


def encode_token(args: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(args, sort_keys=True).encode()).decode().rstrip("=")


MAX_TOKEN = 2048  # our tokens are ~100 characters; anything much longer was not made here


def decode_token(token: str) -> dict[str, Any]:
    """The request a token stands for. Anything else — too long, not base64 JSON, nested a thousand deep
    (`json` would raise RecursionError), without a cursor — is `badResumptionToken`, one line, never a traceback."""
    try:
        if len(token) > MAX_TOKEN:
            raise ValueError("too long")
        args = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        if not isinstance(args, dict) or not isinstance(args.get("cursor"), int) or args["cursor"] < 0:
            raise ValueError("no cursor")
        if any(not isinstance(v, str | int) for v in args.values()):
            raise ValueError("a field that is not a string or a number")
        return args
    except (ValueError, binascii.Error, UnicodeDecodeError, RecursionError) as e:
        raise OaiError("badResumptionToken", f"the resumptionToken {token[:40]!r} is invalid or expired") from e


def _author_xml(name: str) -> str:
    toks = name.split()
    suffix = ""
    if len(toks) > 2 and toks[-1].strip(".").lower() in SUFFIXES:
        suffix, toks = toks[-1], toks[:-1]
    key, fore = (toks[-1], " ".join(toks[:-1])) if toks else (name, "")
    out = f"<author><keyname>{escape(key)}</keyname>"
    out += f"<forenames>{escape(fore)}</forenames>" if fore else ""
    out += f"<suffix>{escape(suffix)}</suffix>" if suffix else ""
    return out + "</author>"


def datestamp(rec: MirrorRecord) -> str:
    return (rec.updated_at or rec.published_at).astimezone(UTC).date().isoformat()


def header_xml(rec: MirrorRecord) -> str:
    m = rec.meta
    sets = "".join(f"<setSpec>{escape(s)}</setSpec>" for s in dict.fromkeys(set_spec(c) for c in m.categories))
    ident = f"<identifier>oai:arXiv.org:{escape(m.arxiv_id)}</identifier>"
    return f"<header>{ident}<datestamp>{datestamp(rec)}</datestamp>{sets}</header>"


def record_xml(rec: MirrorRecord) -> str:
    m = rec.meta
    fields = [f"<id>{escape(m.arxiv_id)}</id>", f"<created>{m.published.isoformat()}</created>"]
    if m.updated and m.updated != m.published:
        fields.append(f"<updated>{m.updated.isoformat()}</updated>")
    fields.append("<authors>" + "".join(_author_xml(a.name) for a in m.authors) + "</authors>")
    fields.append(f"<title>{escape(m.title)}</title>")
    fields.append(f"<categories>{escape(' '.join(m.categories))}</categories>")
    for tag, value in (("comments", m.comment), ("journal-ref", m.journal_ref), ("doi", m.doi)):
        if value:
            fields.append(f"<{tag}>{escape(value)}</{tag}>")
    fields.append(f"<abstract>{escape(m.abstract)}</abstract>")
    body = "".join(fields)
    return f'<record>{header_xml(rec)}<metadata><arXiv xmlns="{ARXIV_NS}">{body}</arXiv></metadata></record>'


def _envelope(verb: str | None, params: dict[str, str], base_url: str, inner: str) -> bytes:
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    attrs = "".join(f" {k}={quoteattr(v)}" for k, v in sorted(params.items()) if k != "verb")
    verb_attr = f" verb={quoteattr(verb)}" if verb else ""
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<OAI-PMH xmlns="{OAI_NS}">'
        f"<responseDate>{now}</responseDate><request{verb_attr}{attrs}>{escape(base_url)}</request>"
        f"{inner}</OAI-PMH>\n"
    ).encode()


def respond(index: Any, params: dict[str, str], base_url: str, page_size: int = PAGE_SIZE) -> bytes:
    """The OAI-PMH answer (always HTTP 200) to one request over a mirror index (`MirrorIndex`/`DiskIndex`)."""
    verb = params.get("verb")
    try:
        try:
            inner = _dispatch(index, verb, params, base_url, page_size)
        except (ValueError, TypeError, KeyError) as e:  # e.g. a token whose fields were edited
            raise OaiError("badArgument", f"unreadable request: {e}") from e
    except OaiError as e:
        inner = f"<error code={quoteattr(e.code)}>{escape(e.message)}</error>"
        verb = verb if e.code != "badVerb" else None
    return _envelope(verb, params, base_url, inner)


def _dispatch(index: Any, verb: str | None, params: dict[str, str], base_url: str, page_size: int) -> str:
    allowed = {
        "Identify": set(),
        "ListMetadataFormats": {"identifier"},
        "ListSets": {"resumptionToken"},
        "GetRecord": {"identifier", "metadataPrefix"},
        "ListRecords": {"from", "until", "set", "metadataPrefix", "resumptionToken"},
        "ListIdentifiers": {"from", "until", "set", "metadataPrefix", "resumptionToken"},
    }
    if verb not in allowed:
        raise OaiError("badVerb", f"illegal verb {verb!r}")
    extra = set(params) - allowed[verb] - {"verb"}
    if extra:
        raise OaiError("badArgument", f"illegal argument(s) {', '.join(sorted(extra))} for {verb}")
    if verb == "Identify":
        return (
            f"<Identify><repositoryName>academiceval mirror</repositoryName><baseURL>{escape(base_url)}</baseURL>"
            "<protocolVersion>2.0</protocolVersion><adminEmail>nobody@localhost</adminEmail>"
            "<earliestDatestamp>1991-08-14</earliestDatestamp><deletedRecord>no</deletedRecord>"
            "<granularity>YYYY-MM-DD</granularity></Identify>"
        )
    if verb == "ListMetadataFormats":
        return (
            "<ListMetadataFormats><metadataFormat><metadataPrefix>arXiv</metadataPrefix>"
            "<schema>http://arxiv.org/OAI/arXiv.xsd</schema>"
            f"<metadataNamespace>{ARXIV_NS}</metadataNamespace></metadataFormat></ListMetadataFormats>"
        )
    if verb == "ListSets":
        specs = [*(f"physics:{a}" for a in PHYSICS), *GROUPS]
        return (
            "<ListSets>"
            + "".join(f"<set><setSpec>{s}</setSpec><setName>{s}</setName></set>" for s in specs)
            + "</ListSets>"
        )
    if verb == "GetRecord":
        _need_prefix(params.get("metadataPrefix"))
        ident = params.get("identifier") or ""
        try:
            rec = index.get(parse_arxiv_id(ident.removeprefix("oai:arXiv.org:"))[0])
        except InvalidArxivIdError:
            rec = None
        if rec is None:
            raise OaiError("idDoesNotExist", f"{ident!r} is unknown or illegal in this repository")
        return f"<GetRecord>{record_xml(rec)}</GetRecord>"
    return _list(index, verb, params, page_size)


def _need_prefix(prefix: str | None) -> None:
    if not prefix:
        raise OaiError("badArgument", "metadataPrefix is required")
    if prefix != "arXiv":
        raise OaiError("cannotDisseminateFormat", f"format {prefix!r} is not served here; use metadataPrefix=arXiv")


def _list(index: Any, verb: str, params: dict[str, str], page_size: int) -> str:
    if "resumptionToken" in params:
        if set(params) - {"verb", "resumptionToken"}:
            raise OaiError("badArgument", "resumptionToken is an exclusive argument")
        args = decode_token(params["resumptionToken"])
        if args.get("verb") != verb:
            raise OaiError("badResumptionToken", "the resumptionToken belongs to another verb")
    else:
        _need_prefix(params.get("metadataPrefix"))
        args = {k: params[k] for k in ("from", "until", "set") if k in params}
        args.update(verb=verb, cursor=0)
    lo = _parse_date(args.get("from"), end=False) or datetime(1991, 1, 1)
    hi = _parse_date(args.get("until"), end=True) or datetime(2100, 12, 31, 23, 59)
    if lo > hi:
        raise OaiError("badArgument", "from is later than until")
    query: Node = updated_between(lo, hi)
    if args.get("set"):
        query = and_(query, set_query(str(args["set"])))
    cursor = int(args["cursor"])
    total, page = index.search_page(
        query, start=cursor, max_results=page_size, sort_by="lastUpdatedDate", sort_order="ascending"
    )
    if total == 0:
        raise OaiError("noRecordsMatch", "the combination of the values of the arguments results in an empty list")
    if cursor >= total:
        raise OaiError("badResumptionToken", "the resumptionToken is past the end of the list")
    items = "".join(header_xml(r) if verb == "ListIdentifiers" else record_xml(r) for r in page)
    nxt = cursor + len(page)
    token = encode_token({**args, "cursor": nxt}) if nxt < total else ""
    items += f'<resumptionToken cursor="{cursor}" completeListSize="{total}">{token}</resumptionToken>'
    return f"<{verb}>{items}</{verb}>"

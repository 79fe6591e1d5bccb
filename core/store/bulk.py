"""Rows written in bulk: the driver's executemany (SQLite) and COPY (PostgreSQL), the SQL compiled from a Table."""

from __future__ import annotations

import struct
from collections.abc import Collection, Iterable, Mapping, Sequence
from itertools import chain
from typing import Any

from sqlalchemy import ClauseElement, Connection, Table, TextClause, insert, text
from sqlalchemy.sql.compiler import SQLCompiler


def executemany_rows(conn: Connection, table: Table, rows: list[dict[str, Any]]) -> None:
    """INSERT rows (all with the keys of the first) with the driver's executemany; the SQL compiled from ``table``."""
    executemany(conn, insert(table), rows)


def executemany(conn: Connection, statement: ClauseElement, rows: Sequence[Mapping[str, Any]]) -> None:
    """Run ``statement`` once per row (all with the keys of the first) with the driver's executemany.

    Compiled once, the values handed to the driver as they are: SQLAlchemy's executemany builds and
    processes a parameter set per row. For values the driver takes unconverted (integers, text).
    """
    compiled = statement.compile(dialect=conn.dialect, column_keys=list(rows[0]), for_executemany=True)
    assert isinstance(compiled, SQLCompiler)
    if compiled.positional:
        order = compiled.positiontup or []
        conn.exec_driver_sql(str(compiled), [tuple(row[key] for key in order) for row in rows])
    else:
        conn.exec_driver_sql(str(compiled), rows)


def copy_rows(
    conn: Connection, table: Table, rows: Iterable[Mapping[str, Any]], *, binary_types: Sequence[str] | None = None
) -> None:
    """PostgreSQL: stream rows (all with the keys of the first) with COPY, several times faster than INSERT; none
    is nothing to do. Rows given by a generator are made as they are sent, one COPY for all of them: memory holds one
    at a time, and the statement's two round trips to the server are paid once.

    The column list comes from the Table (quoted by the dialect), never from input; the values
    travel in COPY's data stream, not in SQL text. JSON columns already hold JSON text (a str, or RawJSON: what
    psycopg writes as it writes any str, no copy made first), which COPY's text format hands to the server's
    jsonb parser unchanged.

    ``binary_types`` (the server's type of each column, in order) chooses COPY's binary format: a bytea
    value travels as its bytes, where the text format writes each byte as two hexadecimal digits.
    """
    remaining = iter(rows)
    first = next(remaining, None)
    if first is None:
        return
    columns = list(first)
    quote = conn.dialect.identifier_preparer.quote
    statement = f"COPY {quote(table.name)} ({', '.join(quote(c) for c in columns)}) FROM STDIN"
    if binary_types is not None:
        statement += " (FORMAT BINARY)"
    driver = conn.connection.driver_connection
    assert driver is not None
    with driver.cursor() as cursor, cursor.copy(statement) as copy:
        if binary_types is not None:
            copy.set_types(list(binary_types))
        for row in chain((first,), remaining):
            copy.write_row(tuple(row[c] for c in columns))


_BINARY_HEADER = b"PGCOPY\n\xff\r\n\x00" + struct.pack("!ii", 0, 0)
_BINARY_TRAILER = struct.pack("!h", -1)


def copy_bytes(conn: Connection, table: Table, pk: int, size: int, pieces: Iterable[bytes]) -> None:
    """PostgreSQL: one row of ``table``'s two columns, an int4 key and a bytea value of ``size`` bytes given in
    pieces, each sent as it comes: psycopg formats a whole row before it sends it.

    COPY's binary format written here (https://www.postgresql.org/docs/current/sql-copy.html#id-1.9.3.55.9.4):
    its header, one tuple (two fields, each its length and its bytes), its trailer. The columns come from the
    Table, quoted by the dialect; the values travel in the data stream.
    """
    quote = conn.dialect.identifier_preparer.quote
    columns = ", ".join(quote(c.name) for c in table.columns)
    driver = conn.connection.driver_connection
    assert driver is not None
    with (
        driver.cursor() as cursor,
        cursor.copy(f"COPY {quote(table.name)} ({columns}) FROM STDIN (FORMAT BINARY)") as copy,
    ):
        copy.write(_BINARY_HEADER + struct.pack("!hiii", 2, 4, pk, size))
        for piece in pieces:
            copy.write(piece)
        copy.write(_BINARY_TRAILER)


def text_array(values: Collection[str]) -> str:
    """PostgreSQL's literal of a ``text[]`` holding ``values``, to travel in COPY's text format as a plain string.

    Every element quoted (a comma, brace, space or ``NULL`` is then literal), a quote or backslash escaped:
    one join, where psycopg's array dumper tests every element with a regular expression."""
    if not values:
        return "{}"
    joined = '","'.join(values)
    # Each separator holds two quotes: any more, and a value holds one (one count, not a scan of every value).
    if joined.count('"') != 2 * (len(values) - 1) or "\\" in joined:
        joined = '","'.join(value.replace("\\", "\\\\").replace('"', '\\"') for value in values)
    return '{"' + joined + '"}'


def next_ids(table: Table) -> TextClause:
    """PostgreSQL: ``n`` (the parameter) new ids from the sequence of ``table``'s serial ``id``, for rows sent by COPY.

    The sequence is named once, by a subquery the server runs once (an init plan): as ``nextval``'s argument itself,
    ``pg_get_serial_sequence`` read the catalog again for every id."""
    return _NEXT_IDS.bindparams(table=table.name)


_NEXT_IDS = text(
    "SELECT nextval(CAST((SELECT pg_get_serial_sequence(:table, 'id')) AS regclass)) FROM generate_series(1, :n)"
)

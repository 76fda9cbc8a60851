"""An HTML report read back as the tests check it: its valued cells, charts, links and text."""

from __future__ import annotations

from html.parser import HTMLParser


class Page(HTMLParser):
    """Collects what the tests read back: valued cells per row/section, images, links, text."""

    def __init__(self) -> None:
        super().__init__()
        self.row: dict | None = None
        self.rows: dict[str, list[dict]] = {}  # table id -> rows
        self.table: str | None = None
        self.section: str | None = None  # data-query of the current query section
        self.values: dict[str, dict[str, tuple[str, str]]] = {}  # section -> key -> (json, text)
        self.images: dict[str, list[tuple[str, str]]] = {}  # section -> [(chart, src)]
        self.urls: list[str] = []
        self.scripts = 0
        self._cell: tuple[str, str] | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        a = dict(attrs)
        self.urls += [v for k, v in attrs if k in ("src", "href") and v is not None]
        if tag == "script":
            self.scripts += 1
        if tag == "table":
            self.table = a.get("id")
        elif tag == "section" and "query" in (a.get("class") or ""):
            self.section = f"{a['data-engine']}:{a['data-query']}"
        elif tag == "tr":
            self.row = {"query": a.get("data-query"), "cells": {}, "texts": []}
        elif tag == "img" and self.section:
            self.images.setdefault(self.section, []).append((a["data-chart"], a["src"]))
        elif tag == "img" and a.get("data-chart") == "summary":
            self.images.setdefault("summary", []).append(("summary", a["src"]))
        if tag in ("td", "th", "dd"):
            self._cell = (a.get("data-key"), a.get("data-value"))
            self._text = []

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th", "dd") and self._cell is not None:
            key, value = self._cell
            text = "".join(self._text)
            if tag == "dd" and self.section and key:
                self.values.setdefault(self.section, {})[key] = (value, text)
            elif self.row is not None:
                self.row["texts"].append(text)
                if key:
                    self.row["cells"][key] = (value, text)
            self._cell = None
        elif tag == "tr" and self.row is not None and self.table:
            self.rows.setdefault(self.table, []).append(self.row)
            self.row = None
        elif tag == "section":
            self.section = None

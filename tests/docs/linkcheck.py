# SPDX-License-Identifier: Apache-2.0
"""The internal links of a built HTML site: every href and src without a
scheme must name a file of the site, and its #fragment an id (or a named
anchor) in that file. External links (a scheme: https:, mailto:) are not
followed."""
import html.parser
import os
import urllib.parse

SCHEMES = ("http:", "https:", "mailto:", "javascript:", "data:", "ftp:")


class _Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids, self.links = set(), []

    def handle_starttag(self, tag, attrs):
        for k, v in attrs:
            if k == "id" or (tag == "a" and k == "name"):
                self.ids.add(v)
            elif k in ("href", "src") and v is not None:
                self.links.append(v)


def _parse(path, cache):
    if path not in cache:
        page = _Page()
        with open(path, encoding="utf-8") as f:
            page.feed(f.read())
        cache[path] = page
    return cache[path]


def broken_links(site):
    """["page: link (why)"] for every internal link of the .html files
    under site that names no file, or no anchor in the file it names."""
    cache, broken = {}, []
    for folder, _, files in os.walk(site):
        for name in sorted(files):
            if not name.endswith(".html"):
                continue
            page = os.path.join(folder, name)
            for link in _parse(page, cache).links:
                if not link or link.lower().startswith(SCHEMES):
                    continue
                url = urllib.parse.urlsplit(link)
                target = page if not url.path else os.path.normpath(
                    os.path.join(folder, urllib.parse.unquote(url.path)))
                if os.path.isdir(target):
                    target = os.path.join(target, "index.html")
                where = "%s: %s" % (os.path.relpath(page, site), link)
                if not os.path.isfile(target):
                    broken.append(where + " (no such file)")
                elif url.fragment and target.endswith(".html") and \
                        urllib.parse.unquote(url.fragment) not in _parse(target, cache).ids:
                    broken.append(where + " (no such anchor)")
    return broken

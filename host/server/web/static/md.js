// A small Markdown renderer that builds DOM nodes: model text only ever
// becomes text nodes (never HTML), links keep to http(s) and mailto.
// Blocks: paragraphs, # headings, ``` fences, > quotes, - and 1. lists,
// --- rules. Inline: `code`, **bold**, *italic* and _italic_, [text](url).
"use strict";

const Markdown = (() => {
  function el(tag, cls) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    return e;
  }

  function safeURL(href) {
    try {
      const u = new URL(href, "https://invalid.example/");
      if (u.origin === "https://invalid.example") return null; // relative
      return ["http:", "https:", "mailto:"].includes(u.protocol) ? u.href : null;
    } catch (_) {
      return null;
    }
  }

  // inline appends the inline content of text to parent.
  function inline(parent, text) {
    const re = /(`+)([\s\S]*?[^`])\1(?!`)|\*\*([^*]+)\*\*|__([^_]+)__|\*([^*\s][^*]*)\*|\b_([^_]+)_\b|\[([^\]]+)\]\(([^)\s]+)\)/g;
    let last = 0;
    let m;
    while ((m = re.exec(text)) !== null) {
      if (m.index > last) parent.appendChild(document.createTextNode(text.slice(last, m.index)));
      if (m[1]) {
        const c = el("code");
        c.textContent = m[2];
        parent.appendChild(c);
      } else if (m[3] || m[4]) {
        const b = el("strong");
        inline(b, m[3] || m[4]);
        parent.appendChild(b);
      } else if (m[5] || m[6]) {
        const i = el("em");
        inline(i, m[5] || m[6]);
        parent.appendChild(i);
      } else {
        const href = safeURL(m[8]);
        if (href) {
          const a = el("a");
          a.href = href;
          a.rel = "noopener noreferrer nofollow";
          a.target = "_blank";
          inline(a, m[7]);
          parent.appendChild(a);
        } else {
          parent.appendChild(document.createTextNode(m[0]));
        }
      }
      last = re.lastIndex;
    }
    if (last < text.length) parent.appendChild(document.createTextNode(text.slice(last)));
  }

  // render returns a fragment of the Markdown source.
  function render(src) {
    const out = document.createDocumentFragment();
    const lines = String(src).replace(/\r\n?/g, "\n").split("\n");
    let i = 0;
    let para = [];
    const flush = () => {
      if (para.length) {
        const p = el("p");
        para.forEach((l, k) => {
          if (k) p.appendChild(el("br"));
          inline(p, l);
        });
        out.appendChild(p);
        para = [];
      }
    };
    while (i < lines.length) {
      const line = lines[i];
      let m;
      if ((m = /^\s*(```+|~~~+)\s*([\w+-]*)\s*$/.exec(line))) {
        flush();
        const fence = m[1];
        const body = [];
        i++;
        while (i < lines.length && !lines[i].trim().startsWith(fence)) body.push(lines[i++]);
        i++;
        const pre = el("pre");
        const code = el("code");
        if (m[2]) code.dataset.lang = m[2];
        code.textContent = body.join("\n");
        pre.appendChild(code);
        out.appendChild(pre);
        continue;
      }
      if ((m = /^(#{1,6})\s+(.*)$/.exec(line))) {
        flush();
        const h = el("h" + Math.min(m[1].length + 2, 6));
        inline(h, m[2]);
        out.appendChild(h);
        i++;
        continue;
      }
      if (/^\s*([-*_])\s*(\1\s*){2,}$/.test(line)) {
        flush();
        out.appendChild(el("hr"));
        i++;
        continue;
      }
      if (/^\s*>/.test(line)) {
        flush();
        const q = [];
        while (i < lines.length && /^\s*>/.test(lines[i])) q.push(lines[i++].replace(/^\s*>\s?/, ""));
        const bq = el("blockquote");
        bq.appendChild(render(q.join("\n")));
        out.appendChild(bq);
        continue;
      }
      if ((m = /^\s*([-*+]|\d+[.)])\s+/.exec(line))) {
        flush();
        const ordered = /\d/.test(m[1]);
        const list = el(ordered ? "ol" : "ul");
        const item = ordered ? /^\s*\d+[.)]\s+(.*)$/ : /^\s*[-*+]\s+(.*)$/;
        while (i < lines.length) {
          const im = item.exec(lines[i]);
          if (im) {
            const li = el("li");
            inline(li, im[1]);
            list.appendChild(li);
          } else if (/^\s{2,}\S/.test(lines[i]) && list.lastChild) {
            list.lastChild.appendChild(document.createTextNode(" "));
            inline(list.lastChild, lines[i].trim());
          } else {
            break;
          }
          i++;
        }
        out.appendChild(list);
        continue;
      }
      if (line.trim() === "") {
        flush();
      } else {
        para.push(line);
      }
      i++;
    }
    flush();
    return out;
  }

  return { render, inline };
})();

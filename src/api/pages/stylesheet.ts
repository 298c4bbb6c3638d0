/**
 * The one stylesheet of Roost's pages (the public profile, status and tag pages, /about, the
 * privacy policy), served at /assets/roost.css with a year's cache: pages link it with `?v=` and
 * a hash of its text, so a new version is a new URL. Phones first; dark when the system is.
 * Colours keep a contrast of at least 4.5:1 on their background (the browser tests run axe-core).
 */
import { createHash } from 'node:crypto';

export const STYLESHEET = `:root{color-scheme:light dark;--bg:#ffffff;--fg:#1f2328;--muted:#57606a;--line:#d0d7de;--card:#f6f8fa;--link:#0b57c9;--accent:#0b57c9;--bar:#c9d8f2}
@media (prefers-color-scheme:dark){:root{--bg:#15171c;--fg:#e6e8eb;--muted:#a8b0ba;--line:#343a44;--card:#1e2128;--link:#8ab4ff;--accent:#8ab4ff;--bar:#2c3d5e}}
*{box-sizing:border-box}
html{background:var(--bg);color:var(--fg)}
body{font:16px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;max-width:42rem;margin:0 auto;padding:0 1rem 2rem;background:var(--bg);color:var(--fg);overflow-wrap:anywhere}
a{color:var(--link)}
a:focus-visible{outline:2px solid var(--accent);outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:.5rem;background:var(--bg);padding:.3rem .6rem}
.site{display:flex;flex-wrap:wrap;align-items:baseline;justify-content:space-between;gap:.5rem;padding:1rem 0;border-bottom:1px solid var(--line);margin-bottom:1.25rem}
.site .brand{font-weight:700;font-size:1.15rem;color:var(--fg);text-decoration:none}
.site nav a{margin-left:1rem}
h1{font-size:1.5rem;line-height:1.25;margin:.2rem 0}
h2{font-size:1.2rem;margin:1.8rem 0 .6rem}
.lead{font-size:1.1rem;color:var(--muted)}
.hint,.meta,.handle{color:var(--muted);font-size:.92rem}
code{background:var(--card);padding:0 .25rem;border-radius:3px}
ol.rules li{margin:.4rem 0}
footer.site-footer{margin-top:3rem;color:var(--muted);font-size:.9rem;border-top:1px solid var(--line);padding-top:1rem}
.profile .banner{display:block;width:100%;height:auto;max-height:12rem;object-fit:cover;border-radius:8px;background:var(--card)}
.profile .who{display:flex;gap:1rem;align-items:center;margin-top:-2rem;padding:0 .5rem}
.profile .who img{border-radius:12px;border:3px solid var(--bg);background:var(--card)}
.profile .who div{padding-top:2rem}
.bio{margin:1rem 0}
.fields{margin:1rem 0;border:1px solid var(--line);border-radius:8px;overflow:hidden}
.fields div{display:grid;grid-template-columns:minmax(6rem,1fr) 2fr;border-top:1px solid var(--line)}
.fields div:first-child{border-top:0}
.fields dt{font-weight:600;padding:.45rem .6rem;background:var(--card)}
.fields dd{margin:0;padding:.45rem .6rem}
.fields .verified{font-weight:600}
.counts{display:flex;flex-wrap:wrap;gap:1.2rem;list-style:none;padding:0;margin:1rem 0}
.counts strong{font-size:1.1rem}
.status{border-top:1px solid var(--line);padding:1rem 0}
.status.focus{font-size:1.08rem}
.status>header{display:flex;justify-content:space-between;align-items:flex-start;gap:.5rem}
.status .author{display:flex;gap:.6rem;align-items:center;text-decoration:none;color:var(--fg)}
.status .author img{border-radius:8px;background:var(--card)}
.status .author .name{font-weight:600;display:block}
.status .boosted{color:var(--muted);font-size:.9rem;margin:0 0 .4rem}
.status .content p{margin:.5rem 0}
.status details summary{cursor:pointer;font-weight:600}
.media{list-style:none;padding:0;margin:.6rem 0;display:grid;grid-template-columns:repeat(auto-fit,minmax(10rem,1fr));gap:.4rem}
.media img,.media video{width:100%;height:auto;border-radius:8px;background:var(--card);display:block}
.media figcaption{font-size:.85rem;color:var(--muted)}
.poll ul{list-style:none;padding:0;margin:.5rem 0}
.poll li{margin:.3rem 0;padding:.3rem .5rem;border-radius:6px;background:var(--card)}
.poll .label{display:flex;justify-content:space-between;gap:1rem}
.poll progress{display:block;width:100%;height:.5rem;accent-color:var(--accent)}
.stats{list-style:none;padding:0;margin:.5rem 0 0;display:flex;gap:1rem;color:var(--muted);font-size:.9rem}
.thread-part{margin:0;padding:0;list-style:none}
.pager{margin:1.5rem 0;display:flex;justify-content:flex-end}
.tombstone{padding:2rem 0}
@media (max-width:30rem){body{font-size:15px}.profile .who{flex-direction:column;align-items:flex-start}.profile .who div{padding-top:0}.fields div{grid-template-columns:1fr}}
`;

/** The stylesheet's version: pages link /assets/roost.css?v=<this>, so the long cache never serves an old one. */
export const STYLESHEET_VERSION = createHash('sha256').update(STYLESHEET).digest('hex').slice(0, 12);
export const STYLESHEET_PATH = '/assets/roost.css';

// The static copy has no server to search: this searches every paper, read from search-index.js
// (loaded on the first keystroke) and lists the matches, each word a part of the title, tags or summary.
(function () {
  var SHOWN = 100;
  var form = document.getElementById("search"), box = document.getElementById("q");
  var results = document.getElementById("results"), list = results.querySelector("ul");
  var heading = document.getElementById("results-heading"), more = document.getElementById("results-more");
  var papers = null, loading = false;
  window.paperbotIndex = function (rows) {
    papers = rows.map(function (r) { return { n: r[0], title: r[1], url: r[2], text: ("#" + r[0] + " " + r[1] + " " + r[3]).toLowerCase() }; });
    show();
  };
  function load() {
    if (loading) return;
    loading = true;
    var script = document.createElement("script");
    script.src = "search-index.js";
    document.body.appendChild(script);
  }
  function item(p) {
    var li = document.createElement("li"), num = document.createElement("span"), title = document.createElement("span");
    li.className = "paper"; num.className = "num"; title.className = "title";
    num.textContent = "#" + p.n + " ";
    if (p.url && /^https?:\/\//i.test(p.url)) {
      var a = document.createElement("a"); a.href = p.url; a.textContent = p.title; title.appendChild(a);
    } else {
      title.textContent = p.title;
    }
    li.appendChild(num); li.appendChild(title);
    return li;
  }
  function show() {
    var words = box.value.toLowerCase().split(/\s+/).filter(Boolean);
    if (!words.length) { results.hidden = true; return; }
    if (papers === null) { load(); return; }
    var found = papers.filter(function (p) { return words.every(function (w) { return p.text.indexOf(w) >= 0; }); });
    heading.textContent = found.length ? "Papers matching “" + box.value.trim() + "” (" + found.length + ")" : "No paper matches “" + box.value.trim() + "”. Try fewer or shorter words.";
    list.replaceChildren.apply(list, found.slice(0, SHOWN).map(item));
    more.hidden = found.length <= SHOWN;
    more.textContent = "and " + (found.length - SHOWN) + " more: add a word to narrow them.";
    results.hidden = false;
  }
  form.hidden = false;
  form.addEventListener("submit", function (e) { e.preventDefault(); show(); });
  box.addEventListener("input", show);
  // A search's own address, as the served page's: index.html?q=words.
  var asked = new URLSearchParams(window.location.search).get("q");
  if (asked) { box.value = asked; show(); }
})();

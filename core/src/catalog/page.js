"use strict";
(() => {
  const search = document.getElementById("q");
  const selects = Array.from(document.querySelectorAll("select[data-key]"));
  const cards = Array.from(document.querySelectorAll("article.tool"));
  const links = Array.from(document.querySelectorAll("#toc li"));
  const count = document.getElementById("count");
  const empty = document.getElementById("empty");
  const total = cards.length;

  // What a search matches: the name, the description and the tags, read once from the page.
  const haystacks = cards.map((card) =>
    Array.from(card.querySelectorAll(".tool-name, .desc, .tag"), (el) => el.textContent)
      .join(" ")
      .toLowerCase()
  );

  function matches(card, index, terms) {
    if (!terms.every((term) => haystacks[index].includes(term))) return false;
    return selects.every((select) => {
      if (!select.value) return true;
      const value = card.dataset[select.dataset.key] || "";
      return select.hasAttribute("data-multi")
        ? value.split(" ").includes(select.value)
        : value === select.value;
    });
  }

  function apply() {
    const terms = search.value.toLowerCase().split(/\s+/).filter(Boolean);
    let shown = 0;
    cards.forEach((card, index) => {
      const keep = matches(card, index, terms);
      card.hidden = !keep;
      if (links[index]) links[index].hidden = !keep;
      if (keep) shown += 1;
    });
    const noun = total === 1 ? "tool" : "tools";
    count.textContent = shown === total ? `${total} ${noun}` : `${shown} of ${total} ${noun}`;
    empty.hidden = shown > 0;
  }

  function reset() {
    search.value = "";
    selects.forEach((select) => { select.value = ""; });
    apply();
  }

  function typing(el) {
    return el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
  }

  search.addEventListener("input", apply);
  selects.forEach((select) => select.addEventListener("change", apply));
  document.getElementById("reset").addEventListener("click", reset);
  document.addEventListener("keydown", (event) => {
    if (event.key === "/" && !event.ctrlKey && !event.metaKey && !event.altKey && !typing(document.activeElement)) {
      event.preventDefault();
      search.focus();
      search.select();
    } else if (event.key === "Escape" && document.activeElement === search) {
      event.preventDefault();
      if (search.value) {
        search.value = "";
        apply();
      } else {
        search.blur();
      }
    }
  });

  document.querySelector(".controls").hidden = false;
  if (window.matchMedia("(max-width: 860px)").matches) {
    document.getElementById("toc").open = false;
  }
  apply();
})();

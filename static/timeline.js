// "Next damaged record / error / divergence" starts from where the reader is: the focused card, else the
// first card in view. It only sets the link's `after` to a card's id (an anchor the server rendered).
(function () {
  "use strict";

  // The card the reader last moved to (a jump, j/k, a click): pressing a link moves the focus to the link.
  var active = document.activeElement;
  var lastCard = active && active.closest ? active.closest("#timeline > [data-msg-id]") : null; // a jump on load
  document.addEventListener("focusin", function (event) {
    var card = event.target.closest && event.target.closest("#timeline > [data-msg-id]");
    if (card) lastCard = card;
  });

  function below() {
    var nav = document.querySelector("[data-timeline-nav]");
    return nav ? nav.getBoundingClientRect().bottom : 0;
  }

  function inView(card) {
    var r = card.getBoundingClientRect();
    return r.bottom > below() + 1 && r.top < window.innerHeight;
  }

  function currentCard() {
    if (lastCard && lastCard.isConnected && inView(lastCard)) return lastCard;
    var cards = document.querySelectorAll("#timeline > [data-msg-id]");
    for (var i = 0; i < cards.length; i++) {
      if (inView(cards[i])) return cards[i];
    }
    return null;
  }

  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("a[data-seek]");
    if (!link || event.ctrlKey || event.metaKey || event.shiftKey) return;
    var card = currentCard();
    if (!card || !card.id) return;
    event.preventDefault();
    var url = new URL(link.href);
    url.searchParams.set("after", card.id);
    location.assign(url.toString());
  });
})();

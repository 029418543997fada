// The positions of a finished game, rebuilt from its full deal by applying its actions in
// order: what the replay viewer shows step by step, and what the game view compares with the
// table it showed when a secret deal is revealed (deal.js). This is a viewer of a log the server
// checked, not a rules engine: it never decides whether a move is legal.
import { SUITS } from "./cards.js";

// A position: {tableau, foundations, score}. A tableau card is its text, upper case when face
// up and lower case when face down (as in tests/data/deals.json); a foundation lists cards
// from the ace up. Positions are never changed once made: each action makes a new one.

function initialPosition(deal) {
  // Column i (0-based) has its lowest i cards face-down (SPEC 1.1, 1.8).
  return {
    tableau: deal.map((column, i) =>
      column.map((card, position) => (position < i ? card.toLowerCase() : card.toUpperCase()))),
    foundations: SUITS.map(() => []),
    score: 0,
  };
}

function apply(position, move) {
  const dash = move.lastIndexOf("-");
  const card = move.slice(0, dash).toUpperCase().replace(/^10/, "T");
  const place = move.slice(dash + 1).toLowerCase();
  const tableau = position.tableau.map((column) => column.slice());
  const foundations = position.foundations.map((pile) => pile.slice());
  let score = position.score;

  // Take the card (with every card on top of it), from a column or a foundation's top.
  let group = null;
  let from = -1;
  for (let i = 0; i < tableau.length && group === null; i += 1) {
    const at = tableau[i].indexOf(card);
    if (at >= 0) {
      group = tableau[i].splice(at);
      from = i;
    }
  }
  if (group === null) {
    const pile = foundations[SUITS.indexOf(card[1])];
    if (pile && pile.length && pile[pile.length - 1] === card) group = [pile.pop()];
  }
  if (group === null) throw new Error(`${card} is not in play`);

  if (place === "f") {
    const pile = foundations[SUITS.indexOf(card[1])];
    if (!pile || group.length !== 1) throw new Error(`${card} cannot go to its foundation`);
    pile.push(card);
    score += 10;
  } else {
    const column = tableau[Number(place.slice(1)) - 1];
    if (!/^t[1-7]$/.test(place) || !column) throw new Error(`no place ${place}`);
    column.push(...group);
  }
  // A face-down card left last in its column turns face-up.
  if (from >= 0) {
    const column = tableau[from];
    const last = column.length - 1;
    if (last >= 0 && column[last] !== column[last].toUpperCase()) {
      column[last] = column[last].toUpperCase();
      score += 5;
    }
  }
  return { tableau, foundations, score };
}

// Every position of the game: positions[k] is the table after the first k actions. An undo
// goes back to the position before the last move not yet undone (face-down cards included).
export function buildPositions(deal, actions) {
  const positions = [initialPosition(deal)];
  const moves = [0];
  const earlier = [];
  let counted = 0;
  let broken = null;
  for (let index = 0; index < actions.length; index += 1) {
    const move = actions[index].move;
    const current = positions[positions.length - 1];
    let next;
    try {
      if (move === "undo") {
        if (!earlier.length) throw new Error("nothing to undo");
        next = earlier.pop();
      } else {
        next = apply(current, move);
        earlier.push(current);
        counted += 1;
      }
    } catch (error) {
      broken = { index, move, error };
      break;
    }
    positions.push(next);
    moves.push(counted);
  }
  return { positions, moves, broken };
}

// A position as the API shows a game's table: face-down cards are null.
export function visible(position) {
  return {
    tableau: position.tableau.map((column) =>
      column.map((card) => (card === card.toUpperCase() ? card : null))),
    foundations: position.foundations,
  };
}

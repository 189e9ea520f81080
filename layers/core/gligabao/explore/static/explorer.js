// The gligabao memory explorer: one page, plain JavaScript and d3-force (vendored beside it, see
// vendor.json). It reads the graph export (live and superseded facts), lays it out once (d3-force's
// simulation run to rest, collisions included, then static) and draws it on a canvas, labels
// placed clear of every node and of each other; lists mirror what is drawn so every entity and
// fact is reachable by keyboard. Every API call goes through the explorer's proxy.
"use strict";

const PAGE_HEADER = "X-Gligabao-Explorer";
const GRAPH_PAGE_ROWS = 5000;
const MAX_GRAPH_ROWS = 60000; // beyond that a browser tab is the wrong tool: the rest is not drawn
const READBACK_LIMIT = 500;
const PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#8c8c8c"];
const COLOURS = { edge: "#8a93a6", superseded: "#b8bec9", evidence: "#e09b00", session: "#c2185b", selected: "#1565c0", match: "#2e7d32" };
const IDEAL_EDGE = 70; // world units between two linked entities
const MAX_RADIUS = 26; // world units: a hub's circle
const COLLIDE_MARGIN = 8; // world units kept free between two circles, for their labels
const SETTLE_TICKS = 60; // collision-only ticks at most, after the simulation's own
const MIN_DRAWN_RADIUS = 1.5; // canvas pixels: a node stays a visible dot when zoomed far out

const $ = (id) => document.getElementById(id);

// ---------------------------------------------------------------- small helpers

function h(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (typeof value === "boolean" && name.startsWith("data-")) node.setAttribute(name, String(value));
    else if (value === null || value === undefined || value === false) continue;
    else if (name === "onclick") node.addEventListener("click", value);
    else if (name === "colour") node.style.background = value; // through the CSSOM: the page's CSP allows no style attribute
    else if (name === "text") node.textContent = value;
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// RFC 3339 times to integer microseconds (the API writes microseconds; Date keeps milliseconds).
function micros(text) {
  if (!text) return null;
  const match = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/i.exec(text);
  if (!match) return Date.parse(text) * 1000;
  const fraction = (match[2] || "").padEnd(6, "0").slice(0, 6);
  return Date.parse(match[1] + match[3]) * 1000 + Number(fraction);
}

function rfc3339(us) {
  const seconds = new Date(Math.floor(us / 1e6) * 1000).toISOString().slice(0, 19);
  const fraction = String(((us % 1e6) + 1e6) % 1e6).padStart(6, "0");
  return `${seconds}.${fraction}Z`;
}

function shownTime(text) {
  if (!text) return "—";
  const us = micros(text);
  const base = new Date(Math.floor(us / 1000)).toISOString().replace("T", " ").slice(0, 19);
  const fraction = String(((us % 1e6) + 1e6) % 1e6).padStart(6, "0").replace(/0+$/, "");
  return `${base}${fraction ? "." + fraction : ""} UTC`;
}

function shortTime(text) {
  if (!text) return null;
  return new Date(Math.floor(micros(text) / 1000)).toISOString().replace("T", " ").slice(0, 19);
}

class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

const STATUS_TITLES = {
  0: "The explorer's server did not answer",
  400: "The API refused the request",
  401: "Not authenticated",
  403: "Not allowed",
  404: "Not found",
  409: "Conflict",
  413: "Too large",
  502: "The API could not be reached, or a model provider failed",
  503: "The API is unavailable",
};

async function api(method, path, params, body) {
  const url = new URL(path, window.location.origin);
  for (const [name, value] of Object.entries(params || {})) {
    if (value !== null && value !== undefined && value !== "") url.searchParams.set(name, value);
  }
  const headers = { [PAGE_HEADER]: "1" };
  if (body !== undefined) headers["content-type"] = "application/json";
  let response;
  try {
    response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (error) {
    throw new ApiError(0, "is `gligabao explore` still running?");
  }
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch (error) {
    data = null;
  }
  if (!response.ok) {
    const message = (data && (data.error || data.message)) || text.slice(0, 300) || response.statusText;
    throw new ApiError(response.status, message);
  }
  return data;
}

function problem(what, error) {
  if (!(error instanceof ApiError)) return `${what} failed: ${error && error.message ? error.message : error}`;
  const title = STATUS_TITLES[error.status] || "The API answered with an error";
  const status = error.status ? ` (HTTP ${error.status})` : "";
  return `${what} failed. ${title}${status}: ${error.message}`;
}

function showBanner(text) {
  $("banner-text").textContent = text;
  $("banner").hidden = false;
}

function hideBanner() {
  $("banner").hidden = true;
  $("banner-text").textContent = "";
}

function notify(text) {
  $("notice").textContent = text;
}

// ---------------------------------------------------------------- state

const state = {
  user: "",
  dataset: "",
  entities: new Map(), // id -> entity (+ x, y, createdUs, degree, colour)
  edges: new Map(), // id -> edge (+ validUs, invalidUs, createdUs, expiredUs, shown)
  truncated: false,
  types: [], // [type, count]: the ontology's types in its order, else the graph's, most frequent first
  colours: new Map(),
  ontology: null, // the dataset's ontology: {name, types: [type, ...]}, or null
  typeFilter: "", // show only the entities of this type ("" = all)
  axis: "recorded",
  stops: [], // the moments where something happened, then Infinity (now)
  timeIndex: 0,
  showSuperseded: false,
  visibleEntities: [],
  visibleEdges: [],
  selection: null, // {kind: "entity"|"edge", id}
  focus: null, // the neighbourhood view: {id, hops}, or null for the whole graph
  search: "",
  matches: new Set(),
  session: null, // {id, entities: Set, edges: Set}
  evidence: null, // {entities: Set, edges: Set}
  sessionsSeen: new Set(),
  view: { scale: 1, x: 0, y: 0 },
  layoutRun: 0,
  layoutMs: null, // how long the last layout took, ticks and collisions
  queryFeatures: { answerFlag: false },
  loading: 0,
};

function now() {
  return state.timeIndex >= state.stops.length - 1;
}

function momentUs() {
  return now() ? Infinity : state.stops[state.timeIndex];
}

// ---------------------------------------------------------------- loading

function readParams() {
  const params = new URLSearchParams(window.location.search);
  return { user: params.get("user") || "", dataset: params.get("dataset") || "" };
}

function writeParams() {
  const params = new URLSearchParams();
  if (state.user) params.set("user", state.user);
  if (state.dataset) params.set("dataset", state.dataset);
  const query = params.toString();
  window.history.replaceState(null, "", query ? `?${query}` : window.location.pathname);
}

function setEnabled(enabled) {
  for (const id of ["search", "axis", "time", "superseded", "session", "session-show", "question", "ask", "type-filter"]) {
    $(id).disabled = !enabled;
  }
}

async function loadUser(user, wanted) {
  hideBanner();
  notify("");
  state.user = user;
  const select = $("dataset");
  select.replaceChildren();
  select.disabled = true;
  clearGraph();
  let datasets;
  try {
    datasets = (await api("GET", "/v1/gb/datasets", { user_id: user })).datasets;
  } catch (error) {
    showEmpty("Nothing to show: the datasets could not be read.");
    showBanner(problem(`Reading the datasets of user “${user}”`, error));
    return;
  }
  for (const dataset of datasets) {
    select.append(h("option", { value: dataset.name }, datasetLabel(dataset)));
  }
  if (wanted && !datasets.some((dataset) => dataset.name === wanted)) {
    select.append(h("option", { value: wanted }, `${wanted} (not listed)`));
  }
  if (!select.options.length) {
    state.dataset = "";
    writeParams();
    showEmpty(`User “${user}” has no datasets yet: remember something for this user first.`);
    return;
  }
  select.disabled = false;
  select.value = wanted || (datasets.some((d) => d.name === "main") ? "main" : datasets[0].name);
  await loadDataset(select.value, { keepLayout: false });
}

// "main (12 entities, 9 facts, 3 queued, 1 failed)": texts of asynchronous remembers still to be
// stored, or that failed, are said only when there are some.
function datasetLabel(dataset) {
  const counts = [`${dataset.entities} entities`, `${dataset.edges} facts`];
  if (dataset.queued) counts.push(`${dataset.queued} queued`);
  if (dataset.failed) counts.push(`${dataset.failed} failed`);
  return `${dataset.name} (${counts.join(", ")})`;
}

async function fetchGraph(user, dataset) {
  const entities = [];
  const edges = [];
  let cursor = null;
  let truncated = false;
  do {
    const page = await api("GET", "/v1/gb/graph", {
      user_id: user,
      dataset,
      include_expired: "true",
      limit: GRAPH_PAGE_ROWS,
      cursor,
    });
    entities.push(...page.entities);
    edges.push(...page.edges);
    cursor = page.next_cursor;
    if (cursor && entities.length + edges.length >= MAX_GRAPH_ROWS) {
      truncated = true;
      break;
    }
  } while (cursor);
  return { entities, edges, truncated };
}

// The dataset's ontology (its entity types, in its order), or null: none attached, or it could not
// be read (the graph is shown all the same, coloured by the types it holds). Found in the user's
// list first, which says the datasets of each: a dataset without one costs no 404.
async function fetchOntology(user, dataset) {
  try {
    const listed = (await api("GET", "/v1/gb/ontologies", { user_id: user })).ontologies;
    const attached = listed.find((ontology) => ontology.datasets.includes(dataset));
    if (!attached) return null;
    const ontology = await api("GET", `/v1/gb/ontologies/${encodeURIComponent(attached.name)}`, { user_id: user });
    return { name: ontology.name, types: ontology.entity_types.map((type) => type.type) };
  } catch (error) {
    return null;
  }
}

async function loadDataset(dataset, { keepLayout }) {
  hideBanner();
  state.dataset = dataset;
  writeParams();
  let graph;
  state.loading += 1;
  try {
    [graph, state.ontology] = await Promise.all([fetchGraph(state.user, dataset), fetchOntology(state.user, dataset)]);
  } catch (error) {
    clearGraph();
    showEmpty("Nothing to show: the graph could not be read.");
    showBanner(problem(`Reading dataset “${dataset}” of user “${state.user}”`, error));
    return;
  } finally {
    state.loading -= 1;
  }
  const previous = state.entities;
  state.entities = new Map();
  for (const entity of graph.entities) {
    const kept = keepLayout ? previous.get(entity.id) : null;
    state.entities.set(entity.id, {
      ...entity,
      description: entity.description || "",
      createdUs: micros(entity.created_at),
      x: kept ? kept.x : NaN,
      y: kept ? kept.y : NaN,
    });
  }
  state.edges = new Map();
  for (const edge of graph.edges) {
    if (!state.entities.has(edge.source_id) || !state.entities.has(edge.target_id)) continue; // past the cap
    state.edges.set(edge.id, {
      ...edge,
      description: edge.description || "",
      validUs: micros(edge.valid_at),
      invalidUs: micros(edge.invalid_at),
      createdUs: micros(edge.created_at),
      expiredUs: micros(edge.expired_at),
    });
  }
  state.truncated = graph.truncated;
  countFullDegrees();
  if (!keepLayout) {
    state.selection = null;
    state.focus = null;
    state.session = null;
    state.evidence = null;
    state.search = "";
    $("search").value = "";
    state.typeFilter = "";
    showDetailHint();
  } else {
    dropForgotten();
  }
  assignColours();
  buildStops(keepLayout);
  setEnabled(true);
  if (!state.entities.size) {
    recompute();
    showEmpty(`Dataset “${dataset}” of user “${state.user}” is empty: it holds no entity and no fact.`);
    return;
  }
  $("empty").hidden = true;
  recompute();
  const placed = [...state.entities.values()].every((entity) => Number.isFinite(entity.x));
  if (placed) {
    canvas.dataset.layout = "done";
    draw();
  } else {
    startLayout();
  }
}

function dropForgotten() {
  const { selection } = state;
  if (selection && !(selection.kind === "entity" ? state.entities : state.edges).has(selection.id)) {
    state.selection = null;
  }
  if (state.focus && !state.entities.has(state.focus.id)) state.focus = null;
  for (const highlight of [state.session, state.evidence]) {
    if (!highlight) continue;
    highlight.entities = new Set([...highlight.entities].filter((id) => state.entities.has(id)));
    highlight.edges = new Set([...highlight.edges].filter((id) => state.edges.has(id)));
  }
}

function clearGraph() {
  state.entities = new Map();
  state.edges = new Map();
  state.visibleEntities = [];
  state.visibleEdges = [];
  state.selection = null;
  state.focus = null;
  state.session = null;
  state.evidence = null;
  state.stops = [Infinity];
  state.timeIndex = 0;
  state.layoutRun += 1;
  setEnabled(false);
  renderLists();
  renderLegend();
  renderHighlightBar();
  renderFocusBar();
  showDetailHint();
  $("stats").textContent = "";
  draw();
}

function showEmpty(text) {
  $("empty").textContent = text;
  $("empty").hidden = false;
  canvas.dataset.layout = "done";
  draw();
}

// The legend's types: with an ontology, its types first in its order, then any other type the
// graph still holds (stored before it), most frequent first.
function assignColours() {
  const counts = new Map();
  for (const entity of state.entities.values()) counts.set(entity.type, (counts.get(entity.type) || 0) + 1);
  const byCount = [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const allowed = state.ontology ? state.ontology.types : [];
  state.types = [
    ...allowed.map((type) => [type, counts.get(type) || 0]),
    ...byCount.filter(([type]) => !allowed.includes(type)),
  ];
  if (state.typeFilter && !state.types.some(([type]) => type === state.typeFilter)) state.typeFilter = "";
  renderTypeFilter();
  state.colours = new Map(state.types.map(([type]) => [type, typeColour(type)]));
  for (const entity of state.entities.values()) entity.colour = state.colours.get(entity.type);
}

// A type's colour comes from its name alone (a hash into the palette), so a type keeps its colour
// in every dataset, whatever other types are there or in what order. The salt is chosen so that
// the eight types the extraction prompt names most (person, organization, place, event, object,
// concept, project, topic) get eight different colours; other types may share one.
const TYPE_COLOUR_SALT = "1299";

function typeColour(type) {
  return PALETTE[hash(`${TYPE_COLOUR_SALT} ${type.toLowerCase()}`) % PALETTE.length];
}

// ---------------------------------------------------------------- time

function buildStops(keep) {
  const wasNow = state.stops.length === 0 || now();
  const previous = wasNow ? Infinity : momentUs();
  const moments = new Set();
  for (const edge of state.edges.values()) {
    const pair = state.axis === "recorded" ? [edge.createdUs, edge.expiredUs] : [edge.validUs, edge.invalidUs];
    for (const us of pair) if (us !== null && Number.isFinite(us)) moments.add(us);
  }
  if (state.axis === "recorded") for (const entity of state.entities.values()) moments.add(entity.createdUs);
  state.stops = [...moments].sort((a, b) => a - b);
  state.stops.push(Infinity);
  let index = state.stops.length - 1;
  if (keep && !wasNow) {
    index = state.stops.findIndex((us) => us >= previous);
    if (index < 0) index = state.stops.length - 1;
  }
  state.timeIndex = index;
  const slider = $("time");
  slider.max = String(state.stops.length - 1);
  slider.value = String(index);
  renderTimeLabel();
}

// An edge at the slider's moment: "live", "superseded" (or ended), or null (not known or not true yet).
function edgeState(edge) {
  if (now()) return edge.expiredUs === null ? "live" : "superseded";
  const at = momentUs();
  if (state.axis === "recorded") {
    if (edge.createdUs > at) return null;
    return edge.expiredUs !== null && edge.expiredUs <= at ? "superseded" : "live";
  }
  if (edge.validUs === null || edge.validUs > at) return null; // without valid_at a fact is never valid at a time
  return edge.invalidUs !== null && edge.invalidUs <= at ? "superseded" : "live";
}

function renderTimeLabel() {
  const label = $("time-label");
  if (now()) {
    label.textContent = "now: the live facts";
  } else {
    const what = state.axis === "recorded" ? "as memory knew it at" : "as true at";
    label.textContent = `${what} ${shownTime(rfc3339(momentUs()))} (step ${state.timeIndex + 1} of ${state.stops.length})`;
  }
  $("time").setAttribute("aria-valuetext", label.textContent);
}

// ---------------------------------------------------------------- what is shown

function recompute() {
  const at = momentUs();
  const shown = [];
  const degree = new Map();
  for (const edge of state.edges.values()) {
    edge.shown = edgeState(edge);
    if (edge.shown === "superseded" && !state.showSuperseded) edge.shown = null;
    if (!edge.shown) continue;
    shown.push(edge);
    degree.set(edge.source_id, (degree.get(edge.source_id) || 0) + 1);
    degree.set(edge.target_id, (degree.get(edge.target_id) || 0) + 1);
  }
  const touched = new Set();
  for (const edge of state.edges.values()) {
    touched.add(edge.source_id);
    touched.add(edge.target_id);
  }
  for (const entity of state.entities.values()) {
    let visible;
    if (state.axis === "recorded" || now()) visible = entity.createdUs <= at;
    else visible = degree.has(entity.id) || !touched.has(entity.id);
    if (state.typeFilter && entity.type !== state.typeFilter) visible = false;
    entity.visible = visible;
    entity.degree = degree.get(entity.id) || 0;
  }
  // an edge is drawn only between drawn entities
  const between = (edge) => state.entities.get(edge.source_id).visible && state.entities.get(edge.target_id).visible;
  if (state.focus) {
    const near = neighbourhood(state.focus.id, state.focus.hops, shown.filter(between));
    for (const entity of state.entities.values()) entity.visible = entity.visible && near.has(entity.id);
  }
  state.visibleEdges = shown.filter(between);
  state.visibleEntities = [...state.entities.values()]
    .filter((entity) => entity.visible)
    .sort((a, b) => a.name.localeCompare(b.name) || a.id - b.id);
  bendParallelEdges();
  updateMatches();
  renderStats();
  renderLists();
  renderLegend();
  renderHighlightBar();
  renderFocusBar();
  draw();
}

// An entity and what is within `hops` facts of it, over the facts drawn (either direction).
function neighbourhood(id, hops, edges) {
  const links = new Map();
  for (const edge of edges) {
    for (const [from, to] of [[edge.source_id, edge.target_id], [edge.target_id, edge.source_id]]) {
      if (!links.has(from)) links.set(from, []);
      links.get(from).push(to);
    }
  }
  const near = new Set([id]);
  let ring = [id];
  for (let hop = 0; hop < hops; hop++) {
    const next = [];
    for (const from of ring) {
      for (const to of links.get(from) || []) {
        if (near.has(to)) continue;
        near.add(to);
        next.push(to);
      }
    }
    ring = next;
  }
  return near;
}

// The neighbourhood view: only an entity and its neighbours (1 hop when opened, 2 on demand), fitted
// to the canvas; the layout is the whole graph's, so a node stays where it was.
function showNeighbourhood(id, hops) {
  if (!state.entities.has(id)) return;
  state.focus = { id, hops };
  $("hops").value = String(hops);
  recompute();
  fitView();
}

function showWholeGraph() {
  if (!state.focus) return;
  state.focus = null;
  recompute();
  fitView();
}

function renderFocusBar() {
  const focus = state.focus && state.entities.get(state.focus.id);
  $("focus-bar").hidden = !focus;
  if (focus) $("focus-text").textContent = `Neighbourhood of “${focus.name}”`;
}

function bendParallelEdges() {
  const groups = new Map();
  for (const edge of state.visibleEdges) {
    const key = edge.source_id < edge.target_id ? `${edge.source_id},${edge.target_id}` : `${edge.target_id},${edge.source_id}`;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(edge);
  }
  for (const group of groups.values()) {
    group.forEach((edge, index) => {
      edge.bend = group.length === 1 ? 0 : (index - (group.length - 1) / 2) * 22;
    });
  }
}

function renderStats() {
  const live = state.visibleEdges.filter((edge) => edge.shown === "live").length;
  const superseded = state.visibleEdges.length - live;
  const parts = [`${state.visibleEntities.length} entities`, `${live} facts`];
  if (superseded) parts.push(`${superseded} superseded or ended`);
  if (state.truncated) parts.push(`only the first ${MAX_GRAPH_ROWS} rows`);
  $("stats").textContent = state.entities.size ? parts.join(" · ") : "";
}

function updateMatches() {
  const wanted = state.search.trim().toLowerCase();
  state.matches = new Set(
    wanted ? state.visibleEntities.filter((entity) => entity.name.toLowerCase().includes(wanted)).map((e) => e.id) : [],
  );
  const list = $("search-results");
  list.replaceChildren();
  if (!wanted) return;
  const found = state.visibleEntities.filter((entity) => state.matches.has(entity.id));
  for (const entity of found.slice(0, 50)) list.append(h("li", {}, entityButton(entity)));
  if (!found.length) list.append(h("li", { class: "hint" }, "no entity of that name here"));
  else if (found.length > 50) list.append(h("li", { class: "hint" }, `and ${found.length - 50} more`));
}

function entityButton(entity) {
  const selected = state.selection && state.selection.kind === "entity" && state.selection.id === entity.id;
  return h(
    "button",
    {
      type: "button",
      "data-entity-id": entity.id,
      "data-type": entity.type,
      "data-degree": entity.degree,
      "data-evidence": Boolean(state.evidence && state.evidence.entities.has(entity.id)),
      "data-session": Boolean(state.session && state.session.entities.has(entity.id)),
      "aria-current": selected ? "true" : null,
      onclick: () => select("entity", entity.id, { center: true }),
    },
    h("span", { class: "swatch", colour: entity.colour }),
    entity.name,
    h("small", {}, `${entity.type} · ${entity.degree}`),
  );
}

function edgeLabel(edge) {
  return `${edge.source} ${edge.relation} ${edge.target}`;
}

function edgeButton(edge) {
  const selected = state.selection && state.selection.kind === "edge" && state.selection.id === edge.id;
  return h(
    "button",
    {
      type: "button",
      "data-edge-id": edge.id,
      "data-state": edge.shown,
      "data-evidence": Boolean(state.evidence && state.evidence.edges.has(edge.id)),
      "data-session": Boolean(state.session && state.session.edges.has(edge.id)),
      "aria-current": selected ? "true" : null,
      onclick: () => select("edge", edge.id, { center: true }),
    },
    edgeLabel(edge),
    edge.shown === "superseded" ? h("small", {}, "superseded") : null,
  );
}

function renderLists() {
  const entities = $("entity-list");
  const edges = $("edge-list");
  entities.replaceChildren(...state.visibleEntities.map((entity) => h("li", {}, entityButton(entity))));
  const ordered = [...state.visibleEdges].sort((a, b) => edgeLabel(a).localeCompare(edgeLabel(b)) || a.id - b.id);
  edges.replaceChildren(...ordered.map((edge) => h("li", {}, edgeButton(edge))));
  $("entity-count").textContent = `(${state.visibleEntities.length})`;
  $("edge-count").textContent = `(${state.visibleEdges.length})`;
}

function renderTypeFilter() {
  const select = $("type-filter");
  const label = state.ontology ? `all types (ontology “${state.ontology.name}”)` : "all types";
  select.replaceChildren(
    h("option", { value: "" }, label),
    ...state.types.map(([type, count]) => h("option", { value: type }, `${type} (${count})`)),
  );
  select.value = state.typeFilter;
}

function renderLegend() {
  $("legend").replaceChildren(
    ...state.types.map(([type, count]) =>
      h("li", {}, h("span", { class: "swatch", colour: state.colours.get(type) }), `${type} (${count})`),
    ),
  );
}

function renderHighlightBar() {
  const parts = [];
  if (state.session) parts.push(`session “${state.session.id}”: ${state.session.entities.size} entities, ${state.session.edges.size} facts`);
  if (state.evidence) parts.push(`evidence: ${state.evidence.entities.size} entities, ${state.evidence.edges.size} facts`);
  $("highlight-bar").hidden = !parts.length;
  $("highlight-text").textContent = parts.join(" · ");
}

// ---------------------------------------------------------------- layout

// A node's radius in world units: its degree over every fact it has (live or superseded), so a
// circle never outgrows the room the layout kept for it, whatever the slider shows.
function radius(entity) {
  return Math.min(MAX_RADIUS, 5 + 3 * Math.sqrt(entity.fullDegree || 0));
}

// The radius a node is drawn with, in canvas pixels: in step with the zoom (so circles kept apart
// in the layout stay apart on screen), never below a visible dot nor above 1.6 times its size.
function drawnRadius(entity) {
  return Math.max(MIN_DRAWN_RADIUS, radius(entity) * Math.min(1.6, state.view.scale));
}

// FNV-1a, 32 bits, mixed: the same text always gives the same number (type colours, initial positions).
function hash(text) {
  let value = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    value ^= text.charCodeAt(i);
    value = Math.imul(value, 0x01000193);
  }
  // murmur3's finaliser: FNV's low bits alone spread similar names badly
  value ^= value >>> 16;
  value = Math.imul(value, 0x85ebca6b);
  value ^= value >>> 13;
  value = Math.imul(value, 0xc2b2ae35);
  value ^= value >>> 16;
  return value >>> 0;
}

// A small seeded generator (an LCG, as d3-force's own) for the simulation's jiggles.
function seededRandom(seed) {
  let value = seed >>> 0 || 1;
  return () => {
    value = (Math.imul(1664525, value) + 1013904223) >>> 0;
    return value / 4294967296;
  };
}

function countFullDegrees() {
  const degree = new Map();
  for (const edge of state.edges.values()) {
    degree.set(edge.source_id, (degree.get(edge.source_id) || 0) + 1);
    degree.set(edge.target_id, (degree.get(edge.target_id) || 0) + 1);
  }
  for (const entity of state.entities.values()) entity.fullDegree = degree.get(entity.id) || 0;
}

// d3-force's simulation (the vendored d3-force.min.js): springs along the facts, many-body
// repulsion with a limited reach (separate pieces pack around each other instead of being flung
// to a ring), collision at each node's radius plus a margin, the centre, and a weak pull to it.
// Each node starts where its id's hash puts it and the jiggles are seeded: the same graph always
// gets the same picture. The ticks (300, fewer above 1,000 entities) run to rest in slices between
// frames, so the tab stays responsive, and the graph is drawn once, at the end.
function startLayout() {
  const run = ++state.layoutRun;
  canvas.dataset.layout = "running";
  const nodes = [...state.entities.values()];
  const spread = IDEAL_EDGE * Math.sqrt(nodes.length + 1);
  for (const node of nodes) {
    const seed = hash(`entity ${node.id}`);
    const angle = ((seed & 0xffff) / 0x10000) * 2 * Math.PI;
    const distance = spread * Math.sqrt((seed >>> 16) / 0x10000);
    node.x = Math.cos(angle) * distance;
    node.y = Math.sin(angle) * distance;
    node.vx = 0;
    node.vy = 0;
  }
  const links = [...state.edges.values()]
    .filter((edge) => edge.source_id !== edge.target_id)
    .map((edge) => ({ source: edge.source_id, target: edge.target_id }));
  const collide = d3.forceCollide((node) => radius(node) + COLLIDE_MARGIN);
  const ticks = nodes.length <= 1000 ? 300 : nodes.length <= 3000 ? 200 : 150; // a large graph's cost
  const theta = nodes.length <= 1000 ? 0.9 : 1.5; // Barnes-Hut: coarser far away on a large graph
  const simulation = d3
    .forceSimulation()
    .stop() // no timer of its own: the ticks are run below
    .alphaDecay(1 - Math.pow(0.001, 1 / ticks)) // alpha from 1 to d3's alphaMin (0.001) in `ticks`
    .randomSource(seededRandom(hash(nodes.map((node) => node.id).join(","))))
    .nodes(nodes)
    .force("link", d3.forceLink(links).id((node) => node.id).distance(IDEAL_EDGE))
    .force("charge", d3.forceManyBody().strength(-160).distanceMax(8 * IDEAL_EDGE).theta(theta))
    .force("collide", collide)
    .force("x", d3.forceX(0).strength(0.04))
    .force("y", d3.forceY(0).strength(0.04))
    .force("center", d3.forceCenter(0, 0));
  const started = performance.now();
  let done = 0;

  function settle() {
    // once at rest, collisions alone until no two circles (and their margins) overlap
    for (const name of ["link", "charge", "x", "y", "center"]) simulation.force(name, null);
    collide.iterations(4);
    simulation.alpha(1);
    for (let i = 0; i < SETTLE_TICKS && overlapping(nodes); i++) simulation.tick();
    for (const node of nodes) node.vx = node.vy = 0;
  }

  function slice() {
    if (run !== state.layoutRun) return; // another dataset was loaded meanwhile
    const sliceStarted = performance.now();
    while (done < ticks && performance.now() - sliceStarted < 40) {
      simulation.tick();
      done += 1;
    }
    if (done < ticks) {
      window.setTimeout(slice, 0);
      return;
    }
    settle();
    state.layoutMs = performance.now() - started; // for bench/explorer.py
    canvas.dataset.layout = "done";
    fitView();
  }
  slice();
}

// Whether two nodes are closer than their radii and half the margin (a quadtree search nearby).
function overlapping(nodes) {
  const tree = d3.quadtree(nodes, (node) => node.x, (node) => node.y);
  const reach = 2 * MAX_RADIUS + COLLIDE_MARGIN;
  return nodes.some((node) => {
    let found = false;
    tree.visit((quad, x0, y0, x1, y1) => {
      for (let leaf = quad.length ? null : quad; leaf && !found; leaf = leaf.next) {
        const other = leaf.data;
        const gap = Math.hypot(other.x - node.x, other.y - node.y);
        found = other !== node && gap < radius(node) + radius(other) + COLLIDE_MARGIN / 2;
      }
      return found || x0 > node.x + reach || x1 < node.x - reach || y0 > node.y + reach || y1 < node.y - reach;
    });
    return found;
  });
}

// ---------------------------------------------------------------- drawing

const canvas = $("graph");
const context = canvas.getContext("2d");
let drawn = { circles: [], labels: [] }; // what the last draw put on the canvas, in canvas pixels
const edgeLabelAt = new Map(); // edge id -> the centre of its label, when it was drawn
let cssWidth = 0;
let cssHeight = 0;

function resize() {
  const rect = canvas.getBoundingClientRect();
  const ratio = window.devicePixelRatio || 1;
  cssWidth = rect.width;
  cssHeight = rect.height;
  canvas.width = Math.max(1, Math.round(rect.width * ratio));
  canvas.height = Math.max(1, Math.round(rect.height * ratio));
  draw();
}

function toScreen(x, y) {
  return [x * state.view.scale + state.view.x, y * state.view.scale + state.view.y];
}

function fitView(entities) {
  const shown = entities || (state.visibleEntities.length ? state.visibleEntities : [...state.entities.values()]);
  const placed = shown.filter((entity) => Number.isFinite(entity.x));
  if (!placed.length || !cssWidth) return draw();
  let minX = Infinity;
  let minY = Infinity;
  let maxX = -Infinity;
  let maxY = -Infinity;
  for (const entity of placed) {
    minX = Math.min(minX, entity.x);
    minY = Math.min(minY, entity.y);
    maxX = Math.max(maxX, entity.x);
    maxY = Math.max(maxY, entity.y);
  }
  const margin = 70;
  const scale = Math.min(2, (cssWidth - 2 * margin) / Math.max(maxX - minX, 1), (cssHeight - 2 * margin) / Math.max(maxY - minY, 1));
  state.view.scale = Math.max(0.02, scale);
  state.view.x = cssWidth / 2 - ((minX + maxX) / 2) * state.view.scale;
  state.view.y = cssHeight / 2 - ((minY + maxY) / 2) * state.view.scale;
  draw();
}

// The points an edge is drawn through, in screen coordinates: ends, control point, label point.
function edgeGeometry(edge) {
  const source = state.entities.get(edge.source_id);
  const target = state.entities.get(edge.target_id);
  const [x1, y1] = toScreen(source.x, source.y);
  const [x2, y2] = toScreen(target.x, target.y);
  if (edge.source_id === edge.target_id) {
    const r = drawnRadius(source) + 14;
    return { loop: true, x1, y1, lx: x1, ly: y1 - r * 2 - 4, r, cx: x1, cy: y1 - r };
  }
  // the normal of the pair's canonical direction, so opposite edges bend apart
  const flip = edge.source_id < edge.target_id ? 1 : -1;
  const dx = (x2 - x1) * flip;
  const dy = (y2 - y1) * flip;
  const length = Math.hypot(dx, dy) || 1;
  const nx = -dy / length;
  const ny = dx / length;
  const mx = (x1 + x2) / 2;
  const my = (y1 + y2) / 2;
  const bend = edge.bend || 0;
  return { x1, y1, x2, y2, cx: mx + nx * bend * 2, cy: my + ny * bend * 2, lx: mx + nx * bend, ly: my + ny * bend };
}

function highlightActive() {
  return Boolean(state.evidence || state.session);
}

function emphasised(kind, id) {
  const key = kind === "entity" ? "entities" : "edges";
  return Boolean((state.evidence && state.evidence[key].has(id)) || (state.session && state.session[key].has(id)));
}

function selectedEdgeEnds() {
  if (!state.selection || state.selection.kind !== "edge") return null;
  const edge = state.edges.get(state.selection.id);
  return edge ? new Set([edge.source_id, edge.target_id]) : null;
}

function draw() {
  const ratio = window.devicePixelRatio || 1;
  context.setTransform(ratio, 0, 0, ratio, 0, 0);
  context.clearRect(0, 0, cssWidth, cssHeight);
  drawn = { circles: [], labels: [] };
  edgeLabelAt.clear();
  if (!state.visibleEntities.length || !state.visibleEntities.every((e) => Number.isFinite(e.x))) return;
  const dim = highlightActive();
  const selected = state.selection;
  const ordered = [...state.visibleEdges].sort((a, b) => rankEdge(a) - rankEdge(b));
  context.lineCap = "round";
  for (const edge of ordered) {
    const g = edgeGeometry(edge);
    const isSelected = selected && selected.kind === "edge" && selected.id === edge.id;
    const inEvidence = state.evidence && state.evidence.edges.has(edge.id);
    const inSession = state.session && state.session.edges.has(edge.id);
    let colour = edge.shown === "superseded" ? COLOURS.superseded : COLOURS.edge;
    let width = 1.3;
    if (inSession) [colour, width] = [COLOURS.session, 2.5];
    if (inEvidence) [colour, width] = [COLOURS.evidence, 3];
    if (isSelected) [colour, width] = [COLOURS.selected, 3.2];
    context.globalAlpha = dim && !inEvidence && !inSession && !isSelected ? 0.2 : 1;
    context.strokeStyle = colour;
    context.fillStyle = colour;
    context.lineWidth = width;
    context.setLineDash(edge.shown === "superseded" ? [6, 5] : []);
    context.beginPath();
    if (g.loop) {
      context.arc(g.cx, g.cy, g.r, 0, Math.PI * 2);
      context.stroke();
    } else {
      context.moveTo(g.x1, g.y1);
      context.quadraticCurveTo(g.cx, g.cy, g.x2, g.y2);
      context.stroke();
      arrowHead(g, drawnRadius(state.entities.get(edge.target_id)));
    }
  }
  context.setLineDash([]);
  const ends = selectedEdgeEnds();
  const circles = [];
  for (const entity of state.visibleEntities) {
    const [x, y] = toScreen(entity.x, entity.y);
    const r = drawnRadius(entity);
    circles.push({ id: entity.id, x, y, r, reach: nodeExtent(entity, r) });
    const isSelected = selected && selected.kind === "entity" && selected.id === entity.id;
    const strong = emphasised("entity", entity.id) || isSelected || (ends && ends.has(entity.id));
    context.globalAlpha = dim && !strong ? 0.25 : 1;
    context.beginPath();
    context.arc(x, y, r, 0, Math.PI * 2);
    context.fillStyle = entity.colour;
    context.fill();
    context.lineWidth = 1.5;
    context.strokeStyle = "#ffffff";
    context.stroke();
    const rings = [];
    if (state.matches.has(entity.id)) rings.push(COLOURS.match);
    if (state.session && state.session.entities.has(entity.id)) rings.push(COLOURS.session);
    if (state.evidence && state.evidence.entities.has(entity.id)) rings.push(COLOURS.evidence);
    if (isSelected) rings.push(COLOURS.selected);
    rings.forEach((colour, i) => {
      context.beginPath();
      context.arc(x, y, r + 3 + i * 3.5, 0, Math.PI * 2);
      context.strokeStyle = colour;
      context.lineWidth = 2.5;
      context.stroke();
    });
  }
  context.globalAlpha = 1;
  const labels = drawLabels(ordered, ends, dim, circles);
  drawn = { circles: circles.map(({ id, x, y, r }) => ({ id, x, y, r })), labels };
}

// Labels are placed greedily, most important first (the selection and highlights, then entities
// by degree, then relations). Each tries a few spots (an entity's name below, above, beside its
// node; a relation along its arrow) and takes the first that covers no node and no label already
// placed; a label with no free spot is left out: zooming in makes room for more. Only what is on
// screen is considered; the halo keeps a label readable over the lines under it.
const textWidths = new Map();
const fontHeights = new Map();
const LABEL_AIR = 2; // canvas pixels kept free around a label, and between a label and a node
const HALO = 2; // half the halo's stroke: the ink reaches that far past the glyphs
const NODE_FONT = "600 12px system-ui, sans-serif";
const EDGE_FONT = "11px system-ui, sans-serif";

function textWidth(text, font) {
  const key = `${font}|${text}`;
  if (!textWidths.has(key)) {
    context.font = font;
    textWidths.set(key, context.measureText(text).width);
  }
  return textWidths.get(key);
}

// The font's full height about its middle (textBaseline "middle"): what any text of it may ink.
function fontExtent(font) {
  if (!fontHeights.has(font)) {
    context.font = font;
    context.textBaseline = "middle";
    const metrics = context.measureText("ÅgjÉ|");
    fontHeights.set(font, [metrics.fontBoundingBoxAscent, metrics.fontBoundingBoxDescent]);
  }
  return fontHeights.get(font);
}

// A grid over the canvas of what is taken: label boxes [x0, y0, x1, y1] and node discs {x, y, r}.
function labelSpace() {
  const cell = 64;
  const buckets = new Map();
  const keys = (x0, y0, x1, y1) => {
    const found = [];
    for (let gx = Math.floor(x0 / cell); gx <= Math.floor(x1 / cell); gx++) {
      for (let gy = Math.floor(y0 / cell); gy <= Math.floor(y1 / cell); gy++) found.push(`${gx},${gy}`);
    }
    return found;
  };
  const add = (item, x0, y0, x1, y1) => {
    for (const key of keys(x0, y0, x1, y1)) {
      if (!buckets.has(key)) buckets.set(key, []);
      buckets.get(key).push(item);
    }
  };
  const clashes = (box, item) =>
    item.box
      ? !(box[2] <= item.box[0] || box[0] >= item.box[2] || box[3] <= item.box[1] || box[1] >= item.box[3])
      : boxMeetsDisc(box, item);
  return {
    free(box) {
      return keys(...box).every((key) => (buckets.get(key) || []).every((item) => !clashes(box, item)));
    },
    takeBox(box) {
      add({ box }, ...box);
    },
    takeDisc(disc) {
      add(disc, disc.x - disc.r, disc.y - disc.r, disc.x + disc.r, disc.y + disc.r);
    },
  };
}

function boxMeetsDisc(box, disc) {
  const dx = disc.x - Math.max(box[0], Math.min(disc.x, box[2]));
  const dy = disc.y - Math.max(box[1], Math.min(disc.y, box[3]));
  return dx * dx + dy * dy < disc.r * disc.r;
}

function onScreen(x, y) {
  return x > -50 && y > -50 && x < cssWidth + 50 && y < cssHeight + 50;
}

// How far a node's ink reaches: its disc, its white outline, and the rings of a match, a
// highlight or the selection.
function nodeExtent(entity, r) {
  let rings = 0;
  if (state.matches.has(entity.id)) rings += 1;
  if (state.session && state.session.entities.has(entity.id)) rings += 1;
  if (state.evidence && state.evidence.entities.has(entity.id)) rings += 1;
  if (state.selection && state.selection.kind === "entity" && state.selection.id === entity.id) rings += 1;
  return rings ? r + 3 + (rings - 1) * 3.5 + 1.25 : r + 0.75;
}

// Where an entity's name may go, centred at these points: below its node first, as before.
function nodeLabelSpots(x, y, reach, w, h) {
  const below = reach + h / 2;
  const side = reach + w / 2;
  const slant = reach * 0.72;
  return [
    [x, y + below],
    [x, y - below],
    [x + side, y],
    [x - side, y],
    [x + slant + w / 2, y + slant + h / 2],
    [x - slant - w / 2, y + slant + h / 2],
    [x + slant + w / 2, y - slant - h / 2],
    [x - slant - w / 2, y - slant - h / 2],
  ];
}

// Where a relation may go: along its arrow, from the middle outwards (a loop: above it).
function edgeLabelSpots(g) {
  if (g.loop) return [[g.lx, g.ly]];
  return [0.5, 0.38, 0.62, 0.27, 0.73].map((t) => [
    (1 - t) * (1 - t) * g.x1 + 2 * (1 - t) * t * g.cx + t * t * g.x2,
    (1 - t) * (1 - t) * g.y1 + 2 * (1 - t) * t * g.cy + t * t * g.y2,
  ]);
}

function drawLabels(ordered, ends, dim, circles) {
  const selected = state.selection;
  const space = labelSpace();
  for (const circle of circles) space.takeDisc({ x: circle.x, y: circle.y, r: circle.reach + LABEL_AIR });
  const labels = [];
  for (const circle of circles) {
    const entity = state.entities.get(circle.id);
    if (!onScreen(circle.x, circle.y)) continue;
    const isSelected = selected && selected.kind === "entity" && selected.id === entity.id;
    const strong = emphasised("entity", entity.id) || isSelected || state.matches.has(entity.id);
    const text = entity.name.length > 40 ? entity.name.slice(0, 39) + "…" : entity.name;
    labels.push({
      text, font: NODE_FONT, colour: "#1f2430",
      spots: (w, h) => nodeLabelSpots(circle.x, circle.y, circle.reach + LABEL_AIR, w, h),
      rank: (isSelected ? 4e6 : 0) + (strong ? 2e6 : 0) + (ends && ends.has(entity.id) ? 1e6 : 0) + entity.degree * 10,
      faint: dim && !strong && !(ends && ends.has(entity.id)),
    });
  }
  for (const edge of ordered) {
    const g = edgeGeometry(edge);
    if (!onScreen(g.lx, g.ly)) continue;
    const isSelected = selected && selected.kind === "edge" && selected.id === edge.id;
    const strong = emphasised("edge", edge.id) || isSelected;
    labels.push({
      text: edge.relation, font: EDGE_FONT, edge: edge.id,
      colour: edge.shown === "superseded" ? "#7b8494" : "#3d4452",
      spots: () => edgeLabelSpots(g),
      rank: (isSelected ? 4e6 : 0) + (strong ? 2e6 : 0) - 1,
      faint: dim && !strong,
    });
  }
  labels.sort((a, b) => b.rank - a.rank);
  context.textAlign = "center";
  context.textBaseline = "middle";
  context.lineJoin = "round";
  const placed = [];
  for (const label of labels) {
    const [ascent, descent] = fontExtent(label.font);
    const w = textWidth(label.text, label.font) + 2 * HALO;
    const h = ascent + descent + 2 * HALO;
    // a spot is the centre of the label's box; with air around it, it must meet nothing taken
    const spot = label.spots(w + 2 * LABEL_AIR, h + 2 * LABEL_AIR).find(([cx, cy]) => {
      const box = [cx - w / 2 - LABEL_AIR, cy - h / 2 - LABEL_AIR, cx + w / 2 + LABEL_AIR, cy + h / 2 + LABEL_AIR];
      return box[0] >= 0 && box[1] >= 0 && box[2] <= cssWidth && box[3] <= cssHeight && space.free(box); // whole, on the canvas
    });
    if (!spot) continue;
    const box = { text: label.text, x: spot[0] - w / 2, y: spot[1] - h / 2, w, h };
    space.takeBox([box.x, box.y, box.x + w, box.y + h]);
    const x = spot[0];
    const y = box.y + HALO + ascent; // the text's middle line, where its ascent ends
    if (label.edge !== undefined) edgeLabelAt.set(label.edge, spot);
    placed.push(box);
    context.font = label.font;
    context.globalAlpha = label.faint ? 0.35 : 1;
    halo(label.text, x, y, label.colour);
  }
  context.globalAlpha = 1;
  return placed;
}

function rankEdge(edge) {
  if (state.selection && state.selection.kind === "edge" && state.selection.id === edge.id) return 4;
  if (state.evidence && state.evidence.edges.has(edge.id)) return 3;
  if (state.session && state.session.edges.has(edge.id)) return 2;
  return edge.shown === "superseded" ? 0 : 1;
}

function halo(text, x, y, colour) {
  context.strokeStyle = "rgba(251,251,252,0.92)";
  context.lineWidth = 4;
  context.strokeText(text, x, y);
  context.fillStyle = colour;
  context.fillText(text, x, y);
}

function arrowHead(g, targetRadius) {
  const angle = Math.atan2(g.y2 - g.cy, g.x2 - g.cx);
  const tipX = g.x2 - Math.cos(angle) * (targetRadius + 2);
  const tipY = g.y2 - Math.sin(angle) * (targetRadius + 2);
  const size = 9;
  context.beginPath();
  context.moveTo(tipX, tipY);
  context.lineTo(tipX - size * Math.cos(angle - 0.4), tipY - size * Math.sin(angle - 0.4));
  context.lineTo(tipX - size * Math.cos(angle + 0.4), tipY - size * Math.sin(angle + 0.4));
  context.closePath();
  context.fill();
}

// ---------------------------------------------------------------- pointer and keyboard on the canvas

function hit(px, py) {
  let best = null;
  let bestDistance = Infinity;
  for (const entity of state.visibleEntities) {
    const [x, y] = toScreen(entity.x, entity.y);
    const r = drawnRadius(entity) + 4;
    const distance = Math.hypot(px - x, py - y);
    if (distance <= r && distance < bestDistance) [best, bestDistance] = [{ kind: "entity", id: entity.id }, distance];
  }
  if (best) return best;
  for (const edge of state.visibleEdges) {
    const g = edgeGeometry(edge);
    let distance;
    if (g.loop) distance = Math.abs(Math.hypot(px - g.cx, py - g.cy) - g.r);
    else distance = curveDistance(g, px, py);
    const [lx, ly] = edgeLabelAt.get(edge.id) || [g.lx, g.ly];
    if (Math.hypot(px - lx, py - ly) < 14) distance = Math.min(distance, 2); // the label counts too
    if (distance <= 6 && distance < bestDistance) [best, bestDistance] = [{ kind: "edge", id: edge.id }, distance];
  }
  return best;
}

function curveDistance(g, px, py) {
  let best = Infinity;
  let [ax, ay] = [g.x1, g.y1];
  for (let step = 1; step <= 16; step++) {
    const t = step / 16;
    const bx = (1 - t) * (1 - t) * g.x1 + 2 * (1 - t) * t * g.cx + t * t * g.x2;
    const by = (1 - t) * (1 - t) * g.y1 + 2 * (1 - t) * t * g.cy + t * t * g.y2;
    best = Math.min(best, segmentDistance(px, py, ax, ay, bx, by));
    [ax, ay] = [bx, by];
  }
  return best;
}

function segmentDistance(px, py, ax, ay, bx, by) {
  const dx = bx - ax;
  const dy = by - ay;
  const length2 = dx * dx + dy * dy;
  const t = length2 ? Math.max(0, Math.min(1, ((px - ax) * dx + (py - ay) * dy) / length2)) : 0;
  return Math.hypot(px - (ax + t * dx), py - (ay + t * dy));
}

function zoomAt(factor, px, py) {
  const scale = Math.max(0.02, Math.min(8, state.view.scale * factor));
  const applied = scale / state.view.scale;
  state.view.x = px - (px - state.view.x) * applied;
  state.view.y = py - (py - state.view.y) * applied;
  state.view.scale = scale;
  draw();
}

function pan(dx, dy) {
  state.view.x += dx;
  state.view.y += dy;
  draw();
}

let pointer = null;

canvas.addEventListener("pointerdown", (event) => {
  const rect = canvas.getBoundingClientRect();
  const px = event.clientX - rect.left;
  const py = event.clientY - rect.top;
  const found = hit(px, py);
  pointer = { px, py, moved: false, found, entity: found && found.kind === "entity" ? state.entities.get(found.id) : null };
  canvas.setPointerCapture(event.pointerId);
});

canvas.addEventListener("pointermove", (event) => {
  const rect = canvas.getBoundingClientRect();
  const px = event.clientX - rect.left;
  const py = event.clientY - rect.top;
  if (!pointer) {
    canvas.classList.toggle("pointing", Boolean(hit(px, py)));
    return;
  }
  const dx = px - pointer.px;
  const dy = py - pointer.py;
  if (!pointer.moved && Math.hypot(dx, dy) < 4) return;
  pointer.moved = true;
  canvas.classList.add("dragging");
  if (pointer.entity) {
    // dragging an entity moves it (and keeps it there)
    pointer.entity.x += dx / state.view.scale;
    pointer.entity.y += dy / state.view.scale;
    draw();
  } else {
    pan(dx, dy);
  }
  pointer.px = px;
  pointer.py = py;
});

canvas.addEventListener("pointerup", () => {
  if (pointer && !pointer.moved) {
    if (pointer.found) select(pointer.found.kind, pointer.found.id, { center: false });
    else clearSelection();
  }
  pointer = null;
  canvas.classList.remove("dragging");
});

canvas.addEventListener("dblclick", (event) => {
  const rect = canvas.getBoundingClientRect();
  const found = hit(event.clientX - rect.left, event.clientY - rect.top);
  if (found && found.kind === "entity") showNeighbourhood(found.id, 1);
});

canvas.addEventListener(
  "wheel",
  (event) => {
    event.preventDefault();
    const rect = canvas.getBoundingClientRect();
    zoomAt(Math.exp(-event.deltaY * 0.0015), event.clientX - rect.left, event.clientY - rect.top);
  },
  { passive: false },
);

canvas.addEventListener("keydown", (event) => {
  const moves = { ArrowLeft: [60, 0], ArrowRight: [-60, 0], ArrowUp: [0, 60], ArrowDown: [0, -60] };
  if (moves[event.key]) {
    pan(...moves[event.key]);
  } else if (event.key === "+" || event.key === "=") {
    zoomAt(1.25, cssWidth / 2, cssHeight / 2);
  } else if (event.key === "-" || event.key === "_") {
    zoomAt(0.8, cssWidth / 2, cssHeight / 2);
  } else if (event.key === "0") {
    fitView();
  } else {
    return;
  }
  event.preventDefault();
});

document.addEventListener("keydown", (event) => {
  const typing = /^(INPUT|TEXTAREA|SELECT)$/.test(event.target.tagName);
  if (event.key === "/" && !typing) {
    event.preventDefault();
    $("search").focus();
  } else if (event.key === "Escape" && !$("confirm").open) {
    if (typing && event.target.id === "search" && state.search) return; // the search box clears itself
    clearSelection();
    clearHighlights();
  }
});

// ---------------------------------------------------------------- selection and details

function center(kind, id) {
  let x;
  let y;
  if (kind === "entity") {
    const entity = state.entities.get(id);
    [x, y] = [entity.x, entity.y];
  } else {
    const edge = state.edges.get(id);
    const a = state.entities.get(edge.source_id);
    const b = state.entities.get(edge.target_id);
    [x, y] = [(a.x + b.x) / 2, (a.y + b.y) / 2];
  }
  if (!Number.isFinite(x)) return;
  const [sx, sy] = toScreen(x, y);
  const margin = 60;
  if (sx > margin && sx < cssWidth - margin && sy > margin && sy < cssHeight - margin) return; // in view already
  state.view.x = cssWidth / 2 - x * state.view.scale;
  state.view.y = cssHeight / 2 - y * state.view.scale;
}

function select(kind, id, { center: move }) {
  state.selection = { kind, id };
  if (move && canvas.dataset.layout === "done") center(kind, id);
  renderLists();
  draw();
  if (kind === "entity") showEntity(id);
  else showEdge(id);
}

function clearSelection() {
  if (!state.selection) return;
  state.selection = null;
  renderLists();
  draw();
  showDetailHint();
}

function showDetailHint() {
  $("detail").replaceChildren(
    h("p", { class: "hint" }, "Select an entity or a fact: click it in the graph, or pick it in the lists below."),
  );
}

function setDetail(...children) {
  $("detail").replaceChildren(...children.filter((child) => child !== null && child !== undefined && child !== false));
}

function entityLink(id, name) {
  return h("button", { type: "button", class: "link", onclick: () => selectIfShown("entity", id) }, name);
}

function edgeLink(id, text) {
  return h("button", { type: "button", class: "link", onclick: () => selectIfShown("edge", id) }, text);
}

function selectIfShown(kind, id) {
  const known = (kind === "entity" ? state.entities : state.edges).get(id);
  if (!known) return notify(`That ${kind} is not in this dataset's graph any more.`);
  if (kind === "edge" && !known.shown && known.expiredUs !== null && !state.showSuperseded) {
    state.showSuperseded = true;
    $("superseded").checked = true;
    recompute();
  }
  select(kind, id, { center: true });
}

function sessionLink(session) {
  return h("button", { type: "button", class: "link", onclick: () => highlightSession(session) }, session);
}

function rememberSessions(sessions) {
  for (const session of sessions) {
    if (!session || state.sessionsSeen.has(session)) continue;
    state.sessionsSeen.add(session);
    $("sessions").append(h("option", { value: session }));
  }
}

async function showEntity(id) {
  const entity = state.entities.get(id);
  const heading = [
    h("h2", {}, entity.name),
    h("p", { class: "meta" }, `${entity.type} · entity ${id} · ${entity.degree} facts shown`),
    h(
      "div",
      { class: "actions" },
      h("button", { type: "button", id: "show-neighbourhood", onclick: () => showNeighbourhood(id, 1) }, "Show its neighbourhood"),
    ),
  ];
  setDetail(...heading, h("p", { class: "hint" }, "Reading its timeline…"));
  let timeline;
  try {
    timeline = await api("GET", `/v1/gb/entities/${id}`, { user_id: state.user, limit: READBACK_LIMIT });
  } catch (error) {
    if (isStillSelected("entity", id)) setDetail(...heading);
    showBanner(problem(`Reading entity ${id}`, error));
    return;
  }
  if (!isStillSelected("entity", id)) return;
  rememberSessions(timeline.sessions || []);
  const items = timeline.edges.map((edge) => {
    const superseded = edge.expired_at !== null;
    const ended = !superseded && edge.invalid_at !== null;
    const other = edge.source_id === id ? edge.target : edge.source;
    return h(
      "li",
      {},
      h(
        "button",
        { type: "button", "data-timeline-edge": edge.id, onclick: () => selectIfShown("edge", edge.id) },
        h("span", {}, `${edge.source} ${edge.relation} ${edge.target} `, h("span", { class: `badge ${superseded ? "superseded" : ended ? "ended" : ""}` }, superseded ? "superseded" : ended ? "ended" : "live")),
        h("small", {}, `valid ${shortTime(edge.valid_at) || "?"} → ${shortTime(edge.invalid_at) || "…"}${edge.superseded_by ? ` · superseded by fact ${edge.superseded_by}` : ""} · with ${other}`),
      ),
    );
  });
  setDetail(
    ...heading,
    entity.description ? h("p", {}, entity.description) : null,
    h(
      "dl",
      {},
      h("dt", {}, "learned"),
      h("dd", {}, shownTime(timeline.created_at)),
      h("dt", {}, "last mentioned"),
      h("dd", {}, shownTime(timeline.updated_at)),
      h("dt", {}, "sessions"),
      h("dd", {}, timeline.sessions.length ? timeline.sessions.flatMap((s, i) => (i ? [", ", sessionLink(s)] : [sessionLink(s)])) : "none"),
    ),
    h("h3", {}, `Timeline (${timeline.edges.length}${timeline.next_cursor ? "+" : ""} facts)`),
    items.length ? h("ol", { class: "items timeline", id: "timeline" }, items) : h("p", { class: "hint" }, "No fact touches it."),
    timeline.next_cursor ? h("p", { class: "hint" }, `Only the first ${READBACK_LIMIT} facts are listed.`) : null,
    h(
      "div",
      { class: "actions" },
      h("button", { type: "button", class: "danger", id: "forget-entity", onclick: () => confirmForget("entities", id, `entity “${entity.name}” and every fact about it (live and superseded)`) }, "Forget entity…"),
    ),
  );
}

function isStillSelected(kind, id) {
  return state.selection && state.selection.kind === kind && state.selection.id === id;
}

function marked(text, names) {
  // the source text with the fact's entity names marked: built from text nodes, never as HTML
  const wanted = names.filter(Boolean).map((name) => name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  if (!wanted.length) return [text];
  const pattern = new RegExp(`(${wanted.join("|")})`, "gi");
  return text.split(pattern).map((part, i) => (i % 2 ? h("mark", {}, part) : part));
}

async function showEdge(id) {
  const edge = state.edges.get(id);
  const status = edge.expiredUs !== null ? "superseded" : edge.invalidUs !== null ? "ended" : "live";
  const heading = [
    h("h2", {}, entityLink(edge.source_id, edge.source), ` ${edge.relation} `, entityLink(edge.target_id, edge.target)),
    h("p", { class: "meta" }, `fact ${id} · `, h("span", { class: `badge ${status}` }, status)),
  ];
  const times = h(
    "dl",
    { id: "edge-times" },
    h("dt", {}, "valid from"),
    h("dd", { "data-time": "valid_at" }, shownTime(edge.valid_at)),
    h("dt", {}, "valid until"),
    h("dd", { "data-time": "invalid_at" }, shownTime(edge.invalid_at)),
    h("dt", {}, "learned"),
    h("dd", { "data-time": "created_at" }, shownTime(edge.created_at)),
    h("dt", {}, "superseded"),
    h("dd", { "data-time": "expired_at" }, shownTime(edge.expired_at)),
  );
  const actions = h(
    "div",
    { class: "actions" },
    h("button", { type: "button", class: "danger", id: "forget-edge", onclick: () => confirmForget("edges", id, `the fact “${edgeLabel(edge)}” (only this fact: the text that said it stays)`) }, "Forget fact…"),
  );
  const source = h("div", { id: "edge-source" }, h("p", { class: "hint" }, edge.artifact_id ? "Reading its source…" : "Its source text was forgotten."));
  setDetail(...heading, edge.description ? h("p", {}, edge.description) : null, times, h("h3", {}, "Source"), source, actions);
  if (!edge.artifact_id) return;
  let artifact;
  try {
    artifact = await api("GET", `/v1/gb/artifacts/${edge.artifact_id}`, { user_id: state.user });
  } catch (error) {
    if (isStillSelected("edge", id)) source.replaceChildren(h("p", { class: "hint" }, "The source could not be read."));
    showBanner(problem(`Reading artifact ${edge.artifact_id}`, error));
    return;
  }
  if (!isStillSelected("edge", id)) return;
  rememberSessions([artifact.session_id]);
  source.replaceChildren(...artifactView(artifact, [edge.source, edge.target]));
  actions.append(
    h("button", { type: "button", class: "danger", id: "forget-artifact", onclick: () => confirmForget("artifacts", artifact.parent_id || artifact.id, artifactForgetText(artifact)) }, "Forget its source text…"),
  );
}

function artifactForgetText(artifact) {
  const id = artifact.parent_id || artifact.id;
  const kind = artifact.kind === "chunk" ? "text" : artifact.kind;
  return `${kind} ${id}${artifact.kind === "text" || artifact.kind === "chunk" ? ", its chunks," : ""} and the facts and entities only it supported`;
}

function artifactView(artifact, names) {
  const kindLines = {
    chunk: () => `chunk ${artifact.chunk_index + 1} of text ${artifact.parent_id}`,
    image: () => `image ${artifact.id}: its description`,
  };
  const kindLine = (kindLines[artifact.kind] || (() => `${artifact.kind} ${artifact.id}`))();
  return [
    h(
      "p",
      { class: "meta" },
      kindLine,
      artifact.session_id ? [" · session ", sessionLink(artifact.session_id)] : null,
      artifact.reference_time ? ` · said ${shownTime(artifact.reference_time)}` : null,
      artifact.status !== "done" ? ` · ${artifact.status}` : null,
    ),
    h("blockquote", { class: "source-text", "data-artifact-id": artifact.id }, marked(artifact.text, names)),
  ];
}

async function showArtifact(id) {
  state.selection = null;
  renderLists();
  draw();
  setDetail(h("p", { class: "hint" }, `Reading artifact ${id}…`));
  let artifact;
  try {
    artifact = await api("GET", `/v1/gb/artifacts/${id}`, { user_id: state.user });
  } catch (error) {
    showDetailHint();
    showBanner(problem(`Reading artifact ${id}`, error));
    return;
  }
  setDetail(
    h("h2", {}, `${artifact.kind[0].toUpperCase()}${artifact.kind.slice(1)} ${artifact.id}`),
    ...artifactView(artifact, []),
    h("h3", {}, `What it stated (${artifact.edges.length} facts)`),
    h("ul", { class: "items" }, artifact.edges.map((edge) => h("li", {}, edgeLink(edge.id, `${edge.source} ${edge.relation} ${edge.target}`)))),
    h("div", { class: "actions" }, h("button", { type: "button", class: "danger", onclick: () => confirmForget("artifacts", artifact.parent_id || artifact.id, artifactForgetText(artifact)) }, `Forget this ${artifact.kind === "chunk" ? "text" : artifact.kind}…`)),
  );
}

// ---------------------------------------------------------------- session filter

async function highlightSession(session) {
  session = session.trim();
  if (!session) return;
  $("session").value = session;
  hideBanner();
  const entities = new Set();
  const edges = new Set();
  const artifacts = [];
  let cursor = null;
  try {
    do {
      const page = await api("GET", `/v1/gb/sessions/${encodeURIComponent(session)}`, {
        user_id: state.user,
        dataset: state.dataset,
        limit: READBACK_LIMIT,
        cursor,
      });
      page.entities.forEach((entity) => entities.add(entity.id));
      page.edges.forEach((edge) => edges.add(edge.id));
      artifacts.push(...page.artifacts);
      cursor = page.next_cursor;
    } while (cursor);
  } catch (error) {
    showBanner(problem(`Reading session “${session}”`, error));
    return;
  }
  rememberSessions([session]);
  state.session = { id: session, entities, edges };
  state.selection = null;
  recompute();
  setDetail(
    h("h2", {}, `Session “${session}”`),
    h("p", { class: "meta" }, `${artifacts.length} texts or images · ${entities.size} entities · ${edges.size} facts touched`),
    artifacts.length
      ? h(
          "ul",
          { class: "items", id: "session-artifacts" },
          artifacts.map((artifact) =>
            h(
              "li",
              {},
              h("button", { type: "button", onclick: () => showArtifact(artifact.id) }, `${artifact.kind} ${artifact.id}: ${artifact.preview}${artifact.chars > artifact.preview.length ? "…" : ""}`),
            ),
          ),
        )
      : h("p", { class: "hint" }, "This session touched nothing in this dataset."),
  );
}

function clearHighlights() {
  if (!state.session && !state.evidence) return;
  state.session = null;
  state.evidence = null;
  recompute();
}

// ---------------------------------------------------------------- questions

async function detectQueryFeatures() {
  // A retrieval-only query ("answer": false) exists when the API's document says so.
  try {
    const document = await api("GET", "/v1/gb/openapi.json");
    const schemas = (document.components && document.components.schemas) || {};
    const request = Object.entries(schemas).find(([name]) => name.startsWith("QueryRequest"));
    state.queryFeatures.answerFlag = Boolean(request && request[1].properties && request[1].properties.answer);
  } catch (error) {
    state.queryFeatures.answerFlag = false;
  }
  $("retrieval-only-label").hidden = !state.queryFeatures.answerFlag;
}

async function ask(question) {
  question = question.trim();
  if (!question) return;
  hideBanner();
  const body = { user_id: state.user, dataset: state.dataset, query: question };
  const asOf = state.axis === "valid" && !now() ? rfc3339(momentUs()) : null;
  if (asOf) body.as_of = asOf;
  const retrievalOnly = state.queryFeatures.answerFlag && $("retrieval-only").checked;
  if (retrievalOnly) body.answer = false;
  $("ask").disabled = true;
  setDetail(h("p", { class: "hint" }, "Asking…"));
  let reply;
  try {
    reply = await api("POST", "/v1/gb/query", undefined, body);
  } catch (error) {
    showDetailHint();
    showBanner(problem("The question", error));
    return;
  } finally {
    $("ask").disabled = false;
  }
  // an answer carries its evidence; a retrieval-only reply is the context itself, at its top level
  const evidence = reply.evidence || { entities: reply.entities || [], edges: reply.edges || [], passages: reply.passages || [] };
  state.evidence = { entities: new Set(evidence.entities.map((e) => e.id)), edges: new Set(evidence.edges.map((e) => e.id)) };
  state.selection = null;
  recompute();
  const missing = evidence.edges.filter((edge) => !state.edges.has(edge.id) || !state.edges.get(edge.id).shown).length;
  setDetail(
    h("h2", {}, "Answer"),
    h("p", { class: "meta" }, asOf ? `as true at ${shownTime(asOf)}` : "from the live facts", retrievalOnly ? " · retrieval only" : ""),
    retrievalOnly || typeof reply.answer !== "string"
      ? h("p", { class: "hint", id: "answer" }, "No answer asked for: what the retrieval found is highlighted.")
      : h("p", { class: "answer", id: "answer" }, reply.answer),
    typeof reply.context === "string"
      ? h("details", { id: "context" }, h("summary", {}, "The context, as the LLM would read it"), h("pre", { class: "source-text" }, reply.context))
      : null,
    h("h3", {}, `${retrievalOnly ? "Retrieved" : "Evidence"}: ${evidence.entities.length} entities, ${evidence.edges.length} facts, ${evidence.passages.length} passages`),
    h("ul", { class: "items", id: "evidence-edges" }, evidence.edges.map((edge) => h("li", {}, edgeLink(edge.id, `${edge.source} ${edge.relation} ${edge.target}`)))),
    h("ul", { class: "items", id: "evidence-entities" }, evidence.entities.map((entity) => h("li", {}, entityLink(entity.id, entity.name)))),
    evidence.passages.length
      ? h(
          "ul",
          { class: "items", id: "evidence-passages" },
          evidence.passages.map((passage) =>
            h("li", {}, h("button", { type: "button", onclick: () => showArtifact(passage.artifact_id) }, `passage ${passage.index + 1} of text ${passage.parent_id}: ${passage.summary || (passage.text || "").slice(0, 120)}`)),
          ),
        )
      : null,
    missing ? h("p", { class: "hint" }, `${missing} of these facts are not drawn at the slider's time or are superseded.`) : null,
  );
}

// ---------------------------------------------------------------- forget

let pendingForget = null;

function confirmForget(kind, id, description) {
  pendingForget = { kind, id };
  notify("");
  $("confirm-title").textContent = `Forget ${kind === "edges" ? "a fact" : kind === "entities" ? "an entity" : "a text"}?`;
  $("confirm-text").textContent = `This deletes ${description} from memory for good: no search can find it again.`;
  $("confirm").returnValue = "";
  $("confirm").showModal();
}

$("confirm").addEventListener("close", async () => {
  const chosen = pendingForget;
  pendingForget = null;
  if ($("confirm").returnValue !== "forget" || !chosen) return;
  hideBanner();
  let reply;
  try {
    reply = await api("DELETE", `/v1/gb/${chosen.kind}/${chosen.id}`, { user_id: state.user });
  } catch (error) {
    showBanner(problem(`Forgetting ${chosen.kind.replace(/s$/, "").replace(/ie$/, "y")} ${chosen.id}`, error));
    return;
  }
  const deleted = reply.deleted || {};
  const counts = Object.entries(deleted).filter(([, count]) => count).map(([what, count]) => `${count} ${what}`);
  state.selection = null;
  showDetailHint();
  await loadDataset(state.dataset, { keepLayout: true });
  notify(`Forgotten: ${counts.join(", ") || "nothing left to delete"}.`);
});

// ---------------------------------------------------------------- wiring

$("pick").addEventListener("submit", (event) => {
  event.preventDefault();
  const user = $("user").value;
  if (user) loadUser(user, "");
});
$("dataset").addEventListener("change", () => loadDataset($("dataset").value, { keepLayout: false }));
$("search").addEventListener("input", () => {
  state.search = $("search").value;
  updateMatches();
  draw();
});
$("search").addEventListener("keydown", (event) => {
  if (event.key === "Enter") {
    event.preventDefault();
    const first = state.visibleEntities.find((entity) => state.matches.has(entity.id));
    if (first) select("entity", first.id, { center: true });
  }
});
$("axis").addEventListener("change", () => {
  state.axis = $("axis").value;
  buildStops(false);
  recompute();
});
$("time").addEventListener("input", () => {
  state.timeIndex = Number($("time").value);
  renderTimeLabel();
  recompute();
});
$("superseded").addEventListener("change", () => {
  state.showSuperseded = $("superseded").checked;
  recompute();
});
$("type-filter").addEventListener("change", () => {
  state.typeFilter = $("type-filter").value;
  recompute();
});
$("session-form").addEventListener("submit", (event) => {
  event.preventDefault();
  highlightSession($("session").value);
});
$("ask-form").addEventListener("submit", (event) => {
  event.preventDefault();
  ask($("question").value);
});
$("question").addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey) {
    event.preventDefault();
    ask($("question").value);
  }
});
$("highlight-clear").addEventListener("click", clearHighlights);
$("whole-graph").addEventListener("click", showWholeGraph);
$("hops").addEventListener("change", () => state.focus && showNeighbourhood(state.focus.id, Number($("hops").value)));
$("banner-close").addEventListener("click", hideBanner);
$("zoom-in").addEventListener("click", () => zoomAt(1.25, cssWidth / 2, cssHeight / 2));
$("zoom-out").addEventListener("click", () => zoomAt(0.8, cssWidth / 2, cssHeight / 2));
$("zoom-fit").addEventListener("click", () => fitView());
new ResizeObserver(resize).observe(canvas);

// For the browser tests and the curious: where an entity or a fact is drawn, in page coordinates.
window.gbExplorer = {
  state,
  screenPoint(kind, id) {
    const rect = canvas.getBoundingClientRect();
    if (kind === "entity") {
      const entity = state.entities.get(id);
      const [x, y] = toScreen(entity.x, entity.y);
      return { x: rect.left + x, y: rect.top + y };
    }
    const g = edgeGeometry(state.edges.get(id));
    const [x, y] = edgeLabelAt.get(id) || [g.lx, g.ly];
    return { x: rect.left + x, y: rect.top + y };
  },
};

// The last draw's geometry, in canvas pixels: the node circles {id, x, y, r} and the label boxes
// {text, x, y, w, h} (x, y: the top left corner), for the browser tests.
window.explorerGeometry = () => structuredClone(drawn);

(function start() {
  resize();
  clearGraph();
  detectQueryFeatures();
  const { user, dataset } = readParams();
  $("user").value = user;
  if (user) loadUser(user, dataset);
  else showEmpty("Enter a user id and press Load to see its memory.");
})();

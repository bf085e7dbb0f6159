// The exported page's behaviour: the session tree (filters, search, choosing a branch), the toggles, links to
// entries and the JSONL download. Everything it shows is already in the page; it fetches nothing.
(() => {
  'use strict';
  const body = document.body;
  body.classList.remove('no-script');
  const index = JSON.parse(document.getElementById('tree-index').textContent);
  const nodes = index.entries;
  const byId = new Map();
  const roots = [];
  nodes.forEach((node, order) => {
    node.order = order;
    node.children = [];
    byId.set(node.id, node);
  });
  for (const node of nodes) {
    const parent = node.parent && byId.get(node.parent);
    if (parent) parent.children.push(node);
    else roots.push(node);
  }

  const FILTERS = ['default', 'no-tools', 'user', 'labeled', 'all'];
  const QUIET = new Set(['model', 'thinking', 'label', 'custom', 'session-info', 'context-edit', 'tool-result', 'system', 'other']);
  const params = new URLSearchParams(location.search);
  let filter = FILTERS.includes(params.get('filter')) ? params.get('filter') : 'default';
  let query = params.get('q') || '';
  let leafId = index.leafId;
  let targetId = leafId;
  const askedLeaf = params.get('leafId');
  const askedTarget = params.get('targetId');
  if (byId.has(askedLeaf)) {
    leafId = askedLeaf;
    targetId = byId.has(askedTarget) ? askedTarget : askedLeaf;
  } else if (byId.has(askedTarget)) {
    targetId = askedTarget;
    leafId = newestLeafUnder(byId.get(askedTarget)).id;
  }

  // The most recently written entry with no children below `node` (the branch that node leads to).
  function newestLeafUnder(node) {
    let best = null;
    const stack = [node];
    while (stack.length) {
      const current = stack.pop();
      if (!current.children.length && (!best || current.order > best.order)) best = current;
      for (const child of current.children) stack.push(child);
    }
    return best || node;
  }

  function pathTo(id) {
    const path = [];
    const seen = new Set();
    let node = byId.get(id);
    while (node && !seen.has(node.id)) {
      seen.add(node.id);
      path.push(node.id);
      node = node.parent && byId.get(node.parent);
    }
    return new Set(path);
  }

  function shownByFilter(node) {
    switch (filter) {
      case 'all': return true;
      case 'user': return node.kind === 'user';
      case 'labeled': return Boolean(node.label);
      case 'no-tools': return !QUIET.has(node.kind) && !node.toolsOnly && node.kind !== 'bash';
      default: return !QUIET.has(node.kind);
    }
  }

  function matchesQuery(node) {
    const terms = query.toLowerCase().split(/\s+/).filter(Boolean);
    if (!terms.length) return true;
    const haystack = `${node.kind} ${node.text} ${node.label || ''}`.toLowerCase();
    return terms.every((term) => haystack.includes(term));
  }

  const visible = (node) => shownByFilter(node) && matchesQuery(node);

  // The nearest visible entries below `node`, looking through hidden ones.
  function visibleBelow(children) {
    const out = [];
    const stack = children.slice().reverse();
    while (stack.length) {
      const node = stack.pop();
      if (visible(node)) out.push(node);
      else for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]);
    }
    return out;
  }

  const WHO = {
    user: 'user: ', assistant: 'assistant: ', 'tool-result': 'result ', bash: '$ ', compaction: '[compaction] ',
    'branch-summary': '[branch summary] ', model: '[model] ', thinking: '[thinking] ', label: '[label] ',
    custom: '[custom] ', 'custom-message': '[message] ', 'session-info': '[name] ', 'context-edit': '[context edit]',
    system: '[system] ', other: '',
  };

  const treeEl = document.getElementById('tree');
  const countEl = document.getElementById('tree-count');

  function renderTree() {
    const onPath = pathTo(leafId);
    const rows = [];
    // Chains stay flat; where a visible entry has several visible children, each child's line gets a connector.
    function walk(list, prefix, branching) {
      list.forEach((first, i) => {
        const last = i === list.length - 1;
        let node = first;
        let linePrefix = prefix + (branching ? (last ? '└─ ' : '├─ ') : '');
        const below = branching ? prefix + (last ? '   ' : '│  ') : prefix;
        while (node) {
          rows.push([node, linePrefix]);
          const next = visibleBelow(node.children);
          if (next.length === 1) {
            node = next[0];
            linePrefix = below;
            continue;
          }
          if (next.length > 1) walk(next, below, true);
          node = null;
        }
      });
    }
    const top = visibleBelow(roots);
    walk(top, '', top.length > 1);
    const fragment = document.createDocumentFragment();
    for (const [node, prefix] of rows) {
      const li = document.createElement('li');
      li.dataset.id = node.id;
      li.tabIndex = 0;
      li.className = `kind-${node.kind}`;
      if (node.toolsOnly) li.classList.add('tools-only');
      if (node.error) li.classList.add('error');
      if (onPath.has(node.id)) li.classList.add('on-path');
      if (node.id === targetId) li.classList.add('selected');
      li.append(prefix);
      if (node.label) {
        const tag = document.createElement('span');
        tag.className = 'tag';
        tag.textContent = `[${node.label}] `;
        li.append(tag);
      }
      const who = document.createElement('span');
      who.className = 'who';
      who.textContent = node.toolsOnly ? '' : (WHO[node.kind] ?? '');
      li.append(who, node.toolsOnly ? `[${node.text}]` : node.text);
      li.title = node.text;
      fragment.append(li);
    }
    treeEl.replaceChildren(fragment);
    countEl.textContent = `${rows.length} / ${nodes.length} entries`;
    for (const button of document.querySelectorAll('.filters button')) {
      button.classList.toggle('active', button.dataset.filter === filter);
      button.setAttribute('aria-pressed', String(button.dataset.filter === filter));
    }
    body.dataset.filter = filter;
  }

  function showBranch(scroll) {
    const onPath = pathTo(leafId);
    for (const el of document.querySelectorAll('#entries > .entry')) el.hidden = !onPath.has(el.dataset.id);
    body.dataset.leaf = leafId || '';
    body.dataset.target = targetId || '';
    if (scroll) {
      let el = document.getElementById(`entry-${targetId}`);
      if (el && el.dataset.shownIn) el = document.getElementById(el.dataset.shownIn) || el;
      if (el) el.scrollIntoView({ block: 'start' });
    }
  }

  function remember() {
    const next = new URLSearchParams();
    if (leafId) next.set('leafId', leafId);
    if (targetId) next.set('targetId', targetId);
    if (filter !== 'default') next.set('filter', filter);
    if (query) next.set('q', query);
    try {
      history.replaceState(null, '', `?${next}`);
    } catch (_) {
      // Some browsers refuse to change a file:// address; the page works the same.
    }
  }

  function linkTo(id) {
    const link = new URLSearchParams({ leafId, targetId: id });
    return `${location.href.split(/[?#]/)[0]}?${link}`;
  }

  function choose(li) {
    targetId = li.dataset.id;
    leafId = newestLeafUnder(byId.get(targetId)).id;
    renderTree();
    showBranch(true);
    remember();
    body.classList.remove('tree-open');
  }
  treeEl.addEventListener('click', (event) => {
    const li = event.target.closest('li[data-id]');
    if (li) choose(li);
  });
  // The keyboard: Enter opens a row, the arrows move between rows.
  treeEl.addEventListener('keydown', (event) => {
    const li = event.target.closest('li[data-id]');
    if (!li) return;
    if (event.key === 'Enter') {
      choose(li);
      treeEl.querySelector('li.selected')?.focus();
    }
    else if (event.key === 'ArrowDown' && li.nextElementSibling) li.nextElementSibling.focus();
    else if (event.key === 'ArrowUp' && li.previousElementSibling) li.previousElementSibling.focus();
    else return;
    event.preventDefault();
  });

  const search = document.getElementById('tree-search');
  search.value = query;
  search.addEventListener('input', () => {
    query = search.value;
    renderTree();
    remember();
  });
  for (const button of document.querySelectorAll('.filters button')) {
    button.addEventListener('click', () => {
      filter = button.dataset.filter;
      renderTree();
      remember();
    });
  }

  function toggle(buttonId, bodyClass) {
    const button = document.getElementById(buttonId);
    const hidden = body.classList.toggle(bodyClass);
    button.setAttribute('aria-pressed', String(!hidden));
  }
  document.getElementById('toggle-thinking').addEventListener('click', () => toggle('toggle-thinking', 'hide-thinking'));
  document.getElementById('toggle-tools').addEventListener('click', () => toggle('toggle-tools', 'hide-tool-output'));
  document.getElementById('show-tree').addEventListener('click', () => body.classList.toggle('tree-open'));
  document.addEventListener('keydown', (event) => {
    if (event.target.closest('input, textarea') || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === 't') toggle('toggle-thinking', 'hide-thinking');
    else if (event.key === 'o') toggle('toggle-tools', 'hide-tool-output');
    else if (event.key === 'Escape') body.classList.remove('tree-open');
  });

  document.getElementById('entries').addEventListener('click', async (event) => {
    const more = event.target.closest('.more');
    if (more) {
      more.parentElement.classList.remove('clip');
      more.remove();
      return;
    }
    const copy = event.target.closest('.copy-link');
    if (!copy) return;
    const link = linkTo(copy.dataset.id);
    try {
      await navigator.clipboard.writeText(link);
    } catch (_) {
      window.prompt('Link to this entry:', link);
    }
    copy.classList.add('copied');
    setTimeout(() => copy.classList.remove('copied'), 1500);
  });

  document.getElementById('download-jsonl').addEventListener('click', () => {
    const source = document.getElementById('session-jsonl');
    const bytes = Uint8Array.from(atob(source.textContent.trim()), (c) => c.charCodeAt(0));
    const url = URL.createObjectURL(new Blob([bytes], { type: 'application/x-ndjson' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = source.dataset.name || 'session.jsonl';
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  });

  // Times as the reader's clock shows them.
  for (const time of document.querySelectorAll('time[datetime]')) {
    const date = new Date(time.getAttribute('datetime'));
    if (Number.isNaN(date.getTime())) continue;
    time.textContent = time.dataset.style === 'date' ? date.toLocaleString() : date.toLocaleTimeString();
    time.title = time.getAttribute('datetime');
  }

  renderTree();
  showBranch(Boolean(askedLeaf || askedTarget));
})();

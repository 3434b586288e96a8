// The live parts of the pages. Everything shown comes from the journal —
// ids, outputs and errors of plans, models and workers — and is set as
// text (textContent), never as markup.
'use strict';

(function () {
  const taskStates = ['pending', 'running', 'waiting', 'done', 'failed', 'skipped'];
  const runStatuses = ['running', 'interrupted', 'waiting', 'completed', 'failed', 'replan_required', 'cancelled'];

  // setStatus gives el the class of status s among the known ones.
  function setStatus(el, s, known) {
    for (const c of Array.from(el.classList)) {
      if (c.startsWith('s-')) el.classList.remove(c);
    }
    if (known.includes(s)) el.classList.add('s-' + s);
  }

  function cell(text) {
    const td = document.createElement('td');
    td.textContent = text;
    return td;
  }

  function statusCell(s, known) {
    const td = document.createElement('td');
    const span = document.createElement('span');
    span.className = 'status';
    setStatus(span, s, known);
    span.textContent = s;
    td.appendChild(span);
    return td;
  }

  function linkCell(text, href) {
    const td = document.createElement('td');
    const a = document.createElement('a');
    a.href = href; // an address the server made, under /runs/
    a.textContent = text;
    td.appendChild(a);
    return td;
  }

  function showLink(a, href) {
    a.hidden = !href;
    if (href) a.href = href;
  }

  // follow opens the live stream of section's page. What the server could
  // not read, and a stream that ended for good (the run is gone, the
  // server keeps as many streams open as it may), are said at the top of
  // the section; the next update clears it.
  function follow(section) {
    const es = new EventSource(section.dataset.live);
    const note = document.createElement('p');
    note.className = 'error live';
    note.hidden = true;
    section.prepend(note);
    const say = (text) => {
      note.textContent = text;
      note.hidden = false;
    };
    es.addEventListener('failure', (ev) => {
      let why = 'the server could not read the journal';
      try {
        why = JSON.parse(ev.data).error || why;
      } catch (e) {
        // A failure without a reason: said as such.
      }
      say('Live updates: ' + why);
    });
    es.addEventListener('error', () => {
      if (es.readyState === EventSource.CLOSED) say('Live updates stopped: reload the page to follow the journal again.');
    });
    for (const kind of ['runs', 'state']) es.addEventListener(kind, () => { note.hidden = true; });
    return es;
  }

  // The runs page: its rows as the server sends them.
  function runsPage(section) {
    for (const box of document.querySelectorAll('.filters input[type=checkbox]')) {
      box.addEventListener('change', () => box.form.submit());
    }
    const rows = document.getElementById('rows');
    const es = follow(section);
    es.addEventListener('runs', (ev) => {
      const v = JSON.parse(ev.data);
      const body = document.createDocumentFragment();
      for (const r of v.rows) {
        const tr = document.createElement('tr');
        tr.append(linkCell(r.id, r.href), cell(r.started), statusCell(r.status, runStatuses), cell(r.tasks), cell(r.what));
        body.appendChild(tr);
      }
      rows.replaceChildren(body);
      document.getElementById('total').textContent = v.total;
      document.getElementById('page').textContent = v.page;
      document.getElementById('pages').textContent = v.pages;
      document.getElementById('empty').hidden = v.rows.length > 0;
      showLink(document.getElementById('prev'), v.prev);
      showLink(document.getElementById('next'), v.next);
    });
  }

  // The run page: each task's state in the graph and the table, the new
  // events; a change of the run's status, which changes what the page
  // offers (its reviews), reloads it.
  function runPage(section) {
    const nodes = new Map();
    for (const g of section.querySelectorAll('g.node[data-task]')) nodes.set(g.dataset.task, g);
    const rows = new Map();
    for (const tr of section.querySelectorAll('table.tasks tr[data-task]')) rows.set(tr.dataset.task, tr);
    const events = document.getElementById('events');
    let seq = 0;
    for (const tr of events.querySelectorAll('tr[data-seq]')) seq = Math.max(seq, Number(tr.dataset.seq));
    const es = follow(section);
    es.addEventListener('state', (ev) => {
      const st = JSON.parse(ev.data);
      if (st.status !== section.dataset.status || st.resume !== section.dataset.resume) {
        es.close();
        location.reload();
        return;
      }
      for (const t of st.tasks) {
        const g = nodes.get(t.id);
        if (g) setStatus(g, t.status, taskStates);
        const tr = rows.get(t.id);
        if (!tr) continue;
        const span = tr.cells[1].firstElementChild;
        setStatus(span, t.status, taskStates);
        span.textContent = t.status;
        tr.cells[2].textContent = t.attempts;
        tr.cells[3].textContent = t.duration;
        tr.cells[4].textContent = t.tokens;
        tr.cells[5].textContent = t.why;
      }
      for (const e of st.events || []) {
        if (e.seq <= seq) continue; // sent again after a reconnection
        seq = e.seq;
        const tr = document.createElement('tr');
        tr.className = 'new';
        tr.dataset.seq = e.seq;
        const n = cell(e.seq);
        n.className = 'seq';
        const at = cell(e.time);
        at.className = 'time';
        tr.append(n, at, cell(e.line));
        events.appendChild(tr);
      }
    });
  }

  // A task's page reloads when the task or its run changes.
  function taskPage(section) {
    const es = follow(section);
    es.addEventListener('state', (ev) => {
      const st = JSON.parse(ev.data);
      const t = st.tasks.find((x) => x.id === section.dataset.task);
      if (st.status !== section.dataset.runStatus || (t && (t.status !== section.dataset.status || String(t.attempts) !== section.dataset.attempts))) {
        es.close();
        location.reload();
      }
    });
  }

  // Who decides a review is remembered in this browser.
  for (const input of document.querySelectorAll('form.decide input[name=by]')) {
    if (!input.value) input.value = localStorage.getItem('dagent.by') || '';
    input.form.addEventListener('submit', () => localStorage.setItem('dagent.by', input.value.trim()));
  }

  const runs = document.getElementById('runs');
  if (runs) runsPage(runs);
  const run = document.getElementById('run');
  if (run) runPage(run);
  const task = document.getElementById('task');
  if (task) taskPage(task);
})();

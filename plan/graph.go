package plan

import (
	"slices"

	"gonum.org/v1/gonum/graph"
)

var _ graph.Directed = (*DAG)(nil)

// taskNode is a task as a gonum node; its id is the task's index.
type taskNode struct{ id int64 }

func (n *taskNode) ID() int64 { return n.id }

// edge is a dependency as a gonum edge, from the dependency to its
// dependent.
type edge struct{ from, to *taskNode }

func (e edge) From() graph.Node         { return e.from }
func (e edge) To() graph.Node           { return e.to }
func (e edge) ReversedEdge() graph.Edge { return edge{from: e.to, to: e.from} }

// nodeIter iterates over the tasks listed in ids or, with all set, over every
// task in source order.
type nodeIter struct {
	dag *DAG
	ids []int
	all bool
	cur int // position of the current node; -1 before the first
}

func (it *nodeIter) size() int {
	if it.all {
		return len(it.dag.nodes)
	}
	return len(it.ids)
}

func (it *nodeIter) Next() bool {
	if it.cur+1 < it.size() {
		it.cur++
		return true
	}
	it.cur = it.size()
	return false
}

func (it *nodeIter) Len() int { return max(it.size()-it.cur-1, 0) }

func (it *nodeIter) Reset() { it.cur = -1 }

func (it *nodeIter) Node() graph.Node {
	if it.cur < 0 || it.cur >= it.size() {
		return nil
	}
	if it.all {
		return &it.dag.nodes[it.cur]
	}
	return &it.dag.nodes[it.ids[it.cur]]
}

func (d *DAG) has(id int64) bool { return id >= 0 && id < int64(len(d.nodes)) }

// Node returns the node of the task with index id, or nil if there is none.
func (d *DAG) Node(id int64) graph.Node {
	if !d.has(id) {
		return nil
	}
	return &d.nodes[id]
}

// Nodes returns the node of every task, in source order.
func (d *DAG) Nodes() graph.Nodes { return &nodeIter{dag: d, all: true, cur: -1} }

// From returns the nodes of the tasks that depend directly on task id, in
// source order: edges run from a dependency to its dependents.
func (d *DAG) From(id int64) graph.Nodes {
	if !d.has(id) {
		return graph.Empty
	}
	return &nodeIter{dag: d, ids: d.dependents.of(int(id)), cur: -1}
}

// To returns the nodes of the tasks task id depends on directly, in
// depends_on order.
func (d *DAG) To(id int64) graph.Nodes {
	if !d.has(id) {
		return graph.Empty
	}
	return &nodeIter{dag: d, ids: d.deps.of(int(id)), cur: -1}
}

// HasEdgeFromTo reports whether task vid depends directly on task uid.
func (d *DAG) HasEdgeFromTo(uid, vid int64) bool {
	return d.has(uid) && d.has(vid) && slices.Contains(d.deps.of(int(vid)), int(uid))
}

// HasEdgeBetween reports whether either of the tasks xid and yid depends
// directly on the other.
func (d *DAG) HasEdgeBetween(xid, yid int64) bool {
	return d.HasEdgeFromTo(xid, yid) || d.HasEdgeFromTo(yid, xid)
}

// Edge returns the edge from task uid to task vid when vid depends directly
// on uid, or nil.
func (d *DAG) Edge(uid, vid int64) graph.Edge {
	if !d.HasEdgeFromTo(uid, vid) {
		return nil
	}
	return edge{from: &d.nodes[uid], to: &d.nodes[vid]}
}

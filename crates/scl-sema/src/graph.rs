//! Strongly connected components, by Tarjan's algorithm (iterative): the
//! one implementation behind the services' `depends_on` cycles (E0329) and
//! the import walk's marks of the modules on an import cycle (E0103).

/// The strongly connected components of the graph on the nodes `0..n`
/// that hold a cycle (two nodes or more, or one node with an edge to
/// itself). Each component lists its nodes in the order the algorithm
/// pops them (its root last); components come in the order they are
/// completed.
///
/// `edge(v, i)` is the `i`-th edge out of `v`: `None` past the last one,
/// `Some(None)` for an edge to leave out (to a node outside the graph),
/// `Some(Some(w))` for an edge to `w`, which must be below `n`. Iterative,
/// so any depth is fine; linear in nodes plus edges.
pub fn cyclic_components(
    n: usize,
    edge: impl Fn(usize, usize) -> Option<Option<usize>>,
) -> Vec<Vec<usize>> {
    const NONE: usize = usize::MAX;
    let mut index = vec![NONE; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut self_loop = vec![false; n];
    let mut stack: Vec<usize> = Vec::new();
    let mut next = 0;
    let mut out: Vec<Vec<usize>> = Vec::new();
    for root in 0..n {
        if index[root] != NONE {
            continue;
        }
        // The DFS path: each node and the next of its edges to follow.
        let mut calls: Vec<(usize, usize)> = vec![(root, 0)];
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut i)) = calls.last_mut() {
            if let Some(w) = edge(v, *i) {
                *i += 1;
                let Some(w) = w else { continue };
                if w == v {
                    self_loop[v] = true;
                }
                if index[w] == NONE {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    calls.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            calls.pop();
            if let Some(&(u, _)) = calls.last() {
                low[u] = low[u].min(low[v]);
            }
            if low[v] == index[v] {
                let mut comp = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    comp.push(w);
                    if w == v {
                        break;
                    }
                }
                if comp.len() > 1 || self_loop[v] {
                    out.push(comp);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::cyclic_components;

    fn comps(adj: &[Vec<usize>]) -> Vec<Vec<usize>> {
        let mut out = cyclic_components(adj.len(), |v, i| adj[v].get(i).map(|&w| Some(w)));
        for c in &mut out {
            c.sort_unstable();
        }
        out.sort();
        out
    }

    #[test]
    fn only_components_with_a_cycle_are_returned() {
        // 0 → 1 → 2 → 0 (a cycle), 2 → 3 (no cycle), 4 → 4 (itself), 5.
        let adj = vec![vec![1], vec![2], vec![0, 3], vec![], vec![4], vec![]];
        assert_eq!(comps(&adj), vec![vec![0, 1, 2], vec![4]]);
    }

    #[test]
    fn two_cycles_joined_by_an_edge_are_two_components() {
        // 0 ⇄ 1 → 2 ⇄ 3.
        let adj = vec![vec![1], vec![0, 2], vec![3], vec![2]];
        assert_eq!(comps(&adj), vec![vec![0, 1], vec![2, 3]]);
    }

    #[test]
    fn a_left_out_edge_closes_no_cycle() {
        // 0 → 1, and 1's edge back to 0 is left out.
        let out = cyclic_components(2, |v, i| match (v, i) {
            (0, 0) => Some(Some(1)),
            (1, 0) => Some(None),
            _ => None,
        });
        assert!(out.is_empty());
    }

    #[test]
    fn a_chain_of_a_million_nodes_needs_no_stack() {
        // 0 → 1 → … → 999999 → 0: one component, found without recursion.
        let n = 1_000_000;
        let out = cyclic_components(n, |v, i| (i == 0).then_some(Some((v + 1) % n)));
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].len(), n);
        let open = cyclic_components(n, |v, i| (i == 0 && v + 1 < n).then_some(Some(v + 1)));
        assert!(open.is_empty());
    }
}

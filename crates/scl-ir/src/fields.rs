//! [`Fields`]: a sorted map with the `BTreeMap` interface (sorted keys, the
//! same method names), stored as a sorted vector while it is small. It is
//! the map behind the evaluator's record values and the IR's `labels` and
//! `vars`.
//!
//! Most records are small (`resources.requests` has three fields, an env
//! about thirty), and a `BTreeMap` node has room for eleven entries
//! whatever it holds, so a record of two fields took a node of eleven.
//! Records are copied whenever an env changes a field its parent set
//! (`resources.requests.cpu = …` copies `resources` and `requests`), so
//! their size is most of an env's memory. A sorted vector holds exactly
//! its entries, and a copy is one allocation. Past [`SMALL`] entries (a
//! map of ten thousand labels) the map becomes a `BTreeMap`, so building a
//! large record is never quadratic.

use std::borrow::Borrow;
use std::collections::{btree_map, BTreeMap};
use std::fmt;

/// The most entries kept in the sorted vector.
pub const SMALL: usize = 32;

/// A sorted map with `BTreeMap`'s interface, compact while small (see the
/// module docs). Iteration is in key order in both forms.
#[derive(Clone)]
pub struct Fields<K, V> {
    repr: Repr<K, V>,
}

#[derive(Clone)]
enum Repr<K, V> {
    Small(Vec<(K, V)>),
    Large(BTreeMap<K, V>),
}

impl<K, V> Default for Fields<K, V> {
    fn default() -> Self {
        Fields {
            repr: Repr::Small(Vec::new()),
        }
    }
}

impl<V> Fields<std::sync::Arc<str>, V> {
    /// [`Fields::get`] for a map keyed by text: the same answer, without a
    /// call to `memcmp` per comparison while small (the keys of a record
    /// mostly differ in their first bytes, and a lookup compares five of
    /// them in an env of thirty fields). Normalization reads an env's
    /// record through it, field by field.
    ///
    /// A small map first tries where the same key text (the same address:
    /// a lookup site's literal), in a map of the same length, was found or
    /// found missing last time on this thread (a table of 512 hints per
    /// thread): the records normalization reads have the same fields at
    /// the same positions env after env, so one or two comparisons replace
    /// the binary search. A hint is only a guess: it is checked against
    /// the keys, and a wrong one costs those comparisons before the search
    /// (`sclc ir`, 1,000 modules: 18 M instructions in this function
    /// before, 9.5 M after).
    pub fn get_str(&self, key: &str) -> Option<&V> {
        match &self.repr {
            Repr::Small(v) => {
                let slot = hint::slot(key, v.len());
                let found = hint::check(
                    slot,
                    v.len(),
                    |i| same_text(v[i].0.as_bytes(), key.as_bytes()),
                    |i| bytes_cmp(v[i].0.as_bytes(), key.as_bytes()),
                );
                if let Some(found) = found {
                    return found.map(|i| &v[i].1);
                }
                let found = v.binary_search_by(|(k, _)| bytes_cmp(k.as_bytes(), key.as_bytes()));
                hint::remember(slot, found);
                found.ok().map(|i| &v[i].1)
            }
            Repr::Large(m) => m.get(key),
        }
    }
}

/// Where [`Fields::get_str`] last found each key text, per thread: a
/// direct-mapped table of 512 slots keyed by the text's address (a lookup
/// site's literal has one address for the life of the program; another
/// text at a reused address only misses).
mod hint {
    use std::cell::Cell;
    use std::cmp::Ordering;

    /// Slots in the table (a lookup site keeps its hint while fewer than a
    /// few hundred other keys are looked up: normalization reads about 70).
    const SLOTS: usize = 512;
    /// Marks a position where the key was missing (where it would go).
    const MISSING: u32 = 1 << 31;

    thread_local! {
        /// (tag, position | MISSING) per slot; tag 0: empty (a tag is odd).
        static TABLE: [Cell<(usize, u32)>; SLOTS] =
            const { [const { Cell::new((0, 0)) }; SLOTS] };
    }

    /// The slot of a key text looked up in a map of `len` entries, and
    /// the tag the slot holds for them: the text's address and length
    /// and the map's length (one literal read in records of different
    /// shapes, `"packages"` of `python` and of `system`, keeps a hint per
    /// shape).
    #[inline]
    pub(super) fn slot(key: &str, len: usize) -> (usize, usize) {
        let tag = (key.as_ptr() as usize ^ key.len()) ^ (len << 56 | len << 3);
        let i = (tag.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 55) % SLOTS;
        (i, tag | 1)
    }

    /// What the slot's hint says, checked: `Some(Some(i))` when the key is
    /// at `i`, `Some(None)` when it is missing (it would go between the
    /// keys at the hinted position and before it), `None` when the slot
    /// holds no hint for this key or the hint is wrong for this map.
    /// `cmp(i)`: how the map's `i`-th key compares with the key; `len`: the
    /// map's length.
    #[inline]
    pub(super) fn check(
        (i, addr): (usize, usize),
        len: usize,
        eq: impl Fn(usize) -> bool,
        cmp: impl Fn(usize) -> Ordering,
    ) -> Option<Option<usize>> {
        let (a, pos) = TABLE.with(|t| t[i].get());
        if a != addr {
            return None;
        }
        if pos & MISSING == 0 {
            let pos = pos as usize;
            return (pos < len && eq(pos)).then_some(Some(pos));
        }
        let pos = (pos & !MISSING) as usize;
        let after_previous = pos == 0 || (pos <= len && cmp(pos - 1) == Ordering::Less);
        let before_next = pos == len || (pos < len && cmp(pos) == Ordering::Greater);
        (pos <= len && after_previous && before_next).then_some(None)
    }

    /// Remembers a binary search's answer (a position below
    /// [`super::SMALL`]) for the key of `slot`.
    #[inline]
    pub(super) fn remember((i, addr): (usize, usize), found: Result<usize, usize>) {
        let pos = match found {
            Ok(p) => p as u32,
            Err(p) => p as u32 | MISSING,
        };
        TABLE.with(|t| t[i].set((addr, pos)));
    }
}

/// `a == b`, in line for texts of up to 16 bytes (field names): two
/// overlapping loads of each, no call to `memcmp`.
#[inline]
fn same_text(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let word = |s: &[u8], at: usize| u64::from_le_bytes(s[at..at + 8].try_into().unwrap());
    let half = |s: &[u8], at: usize| u32::from_le_bytes(s[at..at + 4].try_into().unwrap());
    match n {
        0 => true,
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=7 => half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4),
        8..=16 => word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8),
        _ => a == b,
    }
}

/// `a.cmp(b)`, deciding in line when the first bytes differ (most
/// comparisons of a lookup among field names), else by `memcmp`.
#[inline]
fn bytes_cmp(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    match (a.first(), b.first()) {
        (Some(x), Some(y)) if x != y => x.cmp(y),
        _ => a.cmp(b),
    }
}

impl<K: Ord, V> Fields<K, V> {
    /// An empty map with room for `n` entries without reallocating (the
    /// vector form; past [`SMALL`] entries it turns into a `BTreeMap`
    /// whatever the room).
    pub fn with_capacity(n: usize) -> Self {
        Fields {
            repr: Repr::Small(Vec::with_capacity(n.min(SMALL))),
        }
    }

    /// Drops spare room of the vector form (a map kept for long, like an
    /// IR's labels, holds only its entries).
    pub fn shrink_to_fit(&mut self) {
        if let Repr::Small(v) = &mut self.repr {
            v.shrink_to_fit();
        }
    }

    /// An empty map (no allocation).
    pub fn new() -> Self {
        Self::default()
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Small(v) => v.len(),
            Repr::Large(m) => m.len(),
        }
    }

    /// Whether it has no entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn find<Q>(v: &[(K, V)], key: &Q) -> Result<usize, usize>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        v.binary_search_by(|(k, _)| k.borrow().cmp(key))
    }

    /// The value at `key`.
    pub fn get<Q>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        match &self.repr {
            Repr::Small(v) => Self::find(v, key).ok().map(|i| &v[i].1),
            Repr::Large(m) => m.get(key),
        }
    }

    /// The entry at `key`, with the key as stored.
    pub fn get_key_value<Q>(&self, key: &Q) -> Option<(&K, &V)>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        match &self.repr {
            Repr::Small(v) => Self::find(v, key).ok().map(|i| (&v[i].0, &v[i].1)),
            Repr::Large(m) => m.get_key_value(key),
        }
    }

    /// The value at `key`, mutably.
    pub fn get_mut<Q>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        match &mut self.repr {
            Repr::Small(v) => match Self::find(v, key) {
                Ok(i) => Some(&mut v[i].1),
                Err(_) => None,
            },
            Repr::Large(m) => m.get_mut(key),
        }
    }

    /// Whether `key` has a value.
    pub fn contains_key<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.get(key).is_some()
    }

    /// Sets `key` to `value`, returning the value it replaced. Appending
    /// keys in order costs O(1); otherwise O(len) while small, O(log len)
    /// once large.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        match &mut self.repr {
            Repr::Small(v) => {
                let at = match v.last() {
                    Some((last, _)) if *last < key => Err(v.len()),
                    _ => Self::find(v, &key),
                };
                match at {
                    Ok(i) => Some(std::mem::replace(&mut v[i].1, value)),
                    Err(i) if v.len() < SMALL => {
                        v.insert(i, (key, value));
                        None
                    }
                    Err(_) => {
                        let mut m: BTreeMap<K, V> = std::mem::take(v).into_iter().collect();
                        m.insert(key, value);
                        self.repr = Repr::Large(m);
                        None
                    }
                }
            }
            Repr::Large(m) => m.insert(key, value),
        }
    }

    /// Removes `key`, returning its value.
    pub fn remove<Q>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        match &mut self.repr {
            Repr::Small(v) => Self::find(v, key).ok().map(|i| v.remove(i).1),
            Repr::Large(m) => m.remove(key),
        }
    }

    /// Removes every entry.
    pub fn clear(&mut self) {
        self.repr = Repr::Small(Vec::new());
    }

    /// Keeps the entries `f` is true of.
    pub fn retain(&mut self, mut f: impl FnMut(&K, &mut V) -> bool) {
        match &mut self.repr {
            Repr::Small(v) => v.retain_mut(|(k, x)| f(k, x)),
            Repr::Large(m) => m.retain(|k, x| f(k, x)),
        }
    }

    /// The entries in key order.
    pub fn iter(&self) -> Iter<'_, K, V> {
        Iter(match &self.repr {
            Repr::Small(v) => IterRepr::Small(v.iter()),
            Repr::Large(m) => IterRepr::Large(m.iter()),
        })
    }

    /// The entries whose key is greater than `key`, in key order
    /// (`BTreeMap::range((Excluded(key), Unbounded))`).
    pub fn after<Q>(&self, key: &Q) -> impl Iterator<Item = (&K, &V)>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        use std::ops::Bound;
        let (small, large) = match &self.repr {
            Repr::Small(v) => {
                let at = v.partition_point(|(k, _)| k.borrow() <= key);
                (Some(v[at..].iter().map(|(k, v)| (k, v))), None)
            }
            Repr::Large(m) => (
                None,
                Some(m.range::<Q, _>((Bound::Excluded(key), Bound::Unbounded))),
            ),
        };
        small
            .into_iter()
            .flatten()
            .chain(large.into_iter().flatten())
    }

    /// The entries in key order, values mutable.
    pub fn iter_mut(&mut self) -> IterMut<'_, K, V> {
        IterMut(match &mut self.repr {
            Repr::Small(v) => IterMutRepr::Small(v.iter_mut()),
            Repr::Large(m) => IterMutRepr::Large(m.iter_mut()),
        })
    }

    /// The keys in order.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &K> + ExactSizeIterator + Clone {
        self.iter().map(|(k, _)| k)
    }

    /// The values in key order.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> + ExactSizeIterator + Clone {
        self.iter().map(|(_, v)| v)
    }

    /// The values in key order, mutable.
    pub fn values_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut V> + ExactSizeIterator {
        self.iter_mut().map(|(_, v)| v)
    }

    /// The first entry (the smallest key).
    pub fn first_key_value(&self) -> Option<(&K, &V)> {
        self.iter().next()
    }

    /// The last entry (the largest key).
    pub fn last_key_value(&self) -> Option<(&K, &V)> {
        self.iter().next_back()
    }
}

/// The entries of a [`Fields`], in key order.
pub struct Iter<'a, K, V>(IterRepr<'a, K, V>);

impl<K, V> Clone for Iter<'_, K, V> {
    fn clone(&self) -> Self {
        Iter(match &self.0 {
            IterRepr::Small(i) => IterRepr::Small(i.clone()),
            IterRepr::Large(i) => IterRepr::Large(i.clone()),
        })
    }
}

enum IterRepr<'a, K, V> {
    Small(std::slice::Iter<'a, (K, V)>),
    Large(btree_map::Iter<'a, K, V>),
}

impl<'a, K, V> Iterator for Iter<'a, K, V> {
    type Item = (&'a K, &'a V);
    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            IterRepr::Small(i) => i.next().map(|(k, v)| (k, v)),
            IterRepr::Large(i) => i.next(),
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        match &self.0 {
            IterRepr::Small(i) => i.size_hint(),
            IterRepr::Large(i) => i.size_hint(),
        }
    }
}

impl<K, V> DoubleEndedIterator for Iter<'_, K, V> {
    fn next_back(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            IterRepr::Small(i) => i.next_back().map(|(k, v)| (k, v)),
            IterRepr::Large(i) => i.next_back(),
        }
    }
}

impl<K, V> ExactSizeIterator for Iter<'_, K, V> {}

/// The entries of a [`Fields`], values mutable.
pub struct IterMut<'a, K, V>(IterMutRepr<'a, K, V>);

enum IterMutRepr<'a, K, V> {
    Small(std::slice::IterMut<'a, (K, V)>),
    Large(btree_map::IterMut<'a, K, V>),
}

impl<'a, K, V> Iterator for IterMut<'a, K, V> {
    type Item = (&'a K, &'a mut V);
    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            IterMutRepr::Small(i) => i.next().map(|(k, v)| (&*k, v)),
            IterMutRepr::Large(i) => i.next(),
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        match &self.0 {
            IterMutRepr::Small(i) => i.size_hint(),
            IterMutRepr::Large(i) => i.size_hint(),
        }
    }
}

impl<K, V> DoubleEndedIterator for IterMut<'_, K, V> {
    fn next_back(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            IterMutRepr::Small(i) => i.next_back().map(|(k, v)| (&*k, v)),
            IterMutRepr::Large(i) => i.next_back(),
        }
    }
}

impl<K, V> ExactSizeIterator for IterMut<'_, K, V> {}

/// The entries of a [`Fields`] by value, in key order.
pub struct IntoIter<K, V>(IntoIterRepr<K, V>);

enum IntoIterRepr<K, V> {
    Small(std::vec::IntoIter<(K, V)>),
    Large(btree_map::IntoIter<K, V>),
}

impl<K, V> Iterator for IntoIter<K, V> {
    type Item = (K, V);
    fn next(&mut self) -> Option<(K, V)> {
        match &mut self.0 {
            IntoIterRepr::Small(i) => i.next(),
            IntoIterRepr::Large(i) => i.next(),
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        match &self.0 {
            IntoIterRepr::Small(i) => i.size_hint(),
            IntoIterRepr::Large(i) => i.size_hint(),
        }
    }
}

impl<K, V> DoubleEndedIterator for IntoIter<K, V> {
    fn next_back(&mut self) -> Option<(K, V)> {
        match &mut self.0 {
            IntoIterRepr::Small(i) => i.next_back(),
            IntoIterRepr::Large(i) => i.next_back(),
        }
    }
}

impl<K, V> ExactSizeIterator for IntoIter<K, V> {}

impl<K, V> IntoIterator for Fields<K, V> {
    type Item = (K, V);
    type IntoIter = IntoIter<K, V>;
    fn into_iter(self) -> IntoIter<K, V> {
        IntoIter(match self.repr {
            Repr::Small(v) => IntoIterRepr::Small(v.into_iter()),
            Repr::Large(m) => IntoIterRepr::Large(m.into_iter()),
        })
    }
}

impl<'a, K: Ord, V> IntoIterator for &'a Fields<K, V> {
    type Item = (&'a K, &'a V);
    type IntoIter = Iter<'a, K, V>;
    fn into_iter(self) -> Iter<'a, K, V> {
        self.iter()
    }
}

impl<'a, K: Ord, V> IntoIterator for &'a mut Fields<K, V> {
    type Item = (&'a K, &'a mut V);
    type IntoIter = IterMut<'a, K, V>;
    fn into_iter(self) -> IterMut<'a, K, V> {
        self.iter_mut()
    }
}

impl<K: Ord, V> Extend<(K, V)> for Fields<K, V> {
    fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.insert(k, v);
        }
    }
}

impl<K: Ord, V> FromIterator<(K, V)> for Fields<K, V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut out = Fields::new();
        out.extend(iter);
        out
    }
}

impl<K: Ord, V, const N: usize> From<[(K, V); N]> for Fields<K, V> {
    fn from(entries: [(K, V); N]) -> Self {
        entries.into_iter().collect()
    }
}

impl<K: Ord, V: PartialEq> PartialEq for Fields<K, V> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl<K: Ord, V: Eq> Eq for Fields<K, V> {}

impl<K: Ord + fmt::Debug, V: fmt::Debug> fmt::Debug for Fields<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<K: Ord + std::hash::Hash, V: std::hash::Hash> std::hash::Hash for Fields<K, V> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_usize(self.len());
        for (k, v) in self {
            k.hash(state);
            v.hash(state);
        }
    }
}

impl<K: Ord, Q, V> std::ops::Index<&Q> for Fields<K, V>
where
    K: Borrow<Q>,
    Q: Ord + ?Sized,
{
    type Output = V;
    fn index(&self, key: &Q) -> &V {
        self.get(key).expect("no entry found for key")
    }
}

/// Serialized as a map, in key order (like a `BTreeMap`).
impl<K: Ord + serde::Serialize, V: serde::Serialize> serde::Serialize for Fields<K, V> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.iter())
    }
}

/// Read from a map (a key given twice keeps its last value, as a
/// `BTreeMap` would).
impl<'de, K, V> serde::Deserialize<'de> for Fields<K, V>
where
    K: Ord + serde::Deserialize<'de>,
    V: serde::Deserialize<'de>,
{
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        BTreeMap::<K, V>::deserialize(d).map(|m| Fields {
            repr: if m.len() <= SMALL {
                Repr::Small(m.into_iter().collect())
            } else {
                Repr::Large(m)
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// `same_text` is `==` for every length it compares in line, with the
    /// difference at every byte.
    #[test]
    fn same_text_is_eq() {
        for n in 0..=20usize {
            let a: Vec<u8> = (0..n as u8).map(|i| b'a' + i).collect();
            assert!(same_text(&a, &a.clone()), "{n}");
            for at in 0..n {
                let mut b = a.clone();
                b[at] ^= 1;
                assert!(!same_text(&a, &b), "{n} {at}");
            }
            let mut longer = a.clone();
            longer.push(b'z');
            assert!(!same_text(&a, &longer), "{n}");
        }
    }

    /// `get_str`'s remembered positions never change an answer: maps of
    /// different shapes, changed between lookups, read with the same
    /// literal keys and with copies of them at other addresses, in a
    /// pseudo-random order, answer as `get` does (found, missing before
    /// the first key, between keys, after the last).
    #[test]
    fn get_str_hints_never_change_an_answer() {
        let universe = [
            "", "a", "ab", "abc", "b", "base", "based", "c", "cpu", "gpu", "m", "memory", "z",
        ];
        let mut maps: Vec<Fields<Arc<str>, usize>> = Vec::new();
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..8 {
            let mut f = Fields::new();
            for (i, k) in universe.iter().enumerate() {
                if next() % 2 == 0 {
                    f.insert(Arc::from(*k), i);
                }
            }
            maps.push(f);
        }
        for round in 0..20_000 {
            let m = (next() % maps.len() as u64) as usize;
            let k = universe[(next() % universe.len() as u64) as usize];
            if round % 7 == 0 {
                // Change the map: the hints about it go stale.
                if next() % 2 == 0 {
                    maps[m].insert(Arc::from(k), round);
                } else {
                    maps[m].remove(k);
                }
                continue;
            }
            let copy = k.to_string();
            assert_eq!(maps[m].get_str(k), maps[m].get(k), "{k:?} in map {m}");
            assert_eq!(maps[m].get_str(&copy), maps[m].get(k), "{k:?} in map {m}");
        }
    }

    /// `get_str` finds what `get` finds, for keys that share prefixes,
    /// differ in length only, or are empty, in both forms of the map.
    #[test]
    fn get_str_is_get() {
        let keys = [
            "", "a", "ab", "abc", "b", "ba", "base", "based", "é", "z", "\u{0}",
        ];
        for n in [keys.len(), 3 * SMALL] {
            let mut f: Fields<Arc<str>, usize> = Fields::new();
            for i in 0..n {
                let k = match keys.get(i) {
                    Some(k) => k.to_string(),
                    None => format!("k{i}"),
                };
                f.insert(k.into(), i);
            }
            for probe in keys.iter().map(|k| k.to_string()).chain([
                "aa".into(),
                "k5".into(),
                "bas".into(),
                "zz".into(),
            ]) {
                assert_eq!(f.get_str(&probe), f.get(probe.as_str()), "{probe:?} in {n}");
            }
        }
    }

    /// The same operations on a `Fields` and a `BTreeMap` give the same
    /// map, across the switch from the vector to the tree.
    #[test]
    fn behaves_as_a_btree_map_small_and_large() {
        let mut f: Fields<String, u32> = Fields::new();
        let mut b: BTreeMap<String, u32> = BTreeMap::new();
        // A fixed pseudo-random order of 3 * SMALL keys, some repeated.
        let mut x: u32 = 7;
        for step in 0..(6 * SMALL as u32) {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345) % 1000;
            let key = format!("k{}", x % (3 * SMALL as u32));
            if step % 5 == 4 {
                assert_eq!(f.remove(key.as_str()), b.remove(key.as_str()));
            } else {
                assert_eq!(f.insert(key.clone(), step), b.insert(key, step));
            }
            assert_eq!(f.len(), b.len());
            assert!(f.iter().eq(b.iter()), "step {step}");
            assert!(f.iter().rev().eq(b.iter().rev()));
        }
        assert!(f.len() > SMALL, "the tree form was reached");
        for (k, v) in &b {
            assert_eq!(f.get(k.as_str()), Some(v));
            assert_eq!(f[k.as_str()], *v);
        }
        assert_eq!(f.get("absent"), None);
        for probe in ["k1", "k40", "k5", "a", "z"] {
            assert!(
                f.after(probe).eq(b.range::<str, _>((
                    std::ops::Bound::Excluded(probe),
                    std::ops::Bound::Unbounded
                ))),
                "{probe}"
            );
        }
        f.retain(|_, v| *v % 2 == 0);
        b.retain(|_, v| *v % 2 == 0);
        assert!(f.clone().into_iter().eq(b.clone().into_iter()));
        assert_eq!(f.first_key_value(), b.first_key_value());
        assert_eq!(f.last_key_value(), b.last_key_value());
    }

    #[test]
    fn serializes_as_a_map_in_key_order() {
        let f: Fields<String, u32> = [("b".to_string(), 2), ("a".to_string(), 1)].into();
        let text = serde_json::to_string(&f).unwrap();
        assert_eq!(text, r#"{"a":1,"b":2}"#);
        let back: Fields<String, u32> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, f);
    }

    #[test]
    fn equality_ignores_the_form() {
        let small: Fields<u32, u32> = (0..4).map(|i| (i, i)).collect();
        let mut large: Fields<u32, u32> = (0..(2 * SMALL as u32)).map(|i| (i, i)).collect();
        large.retain(|k, _| *k < 4);
        assert_eq!(small, large);
    }
}

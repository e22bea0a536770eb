//! The ranking of `search_tools`: Okapi BM25 over each tool's name, short description, tags,
//! category and argument names, the fields weighted, counted only over the tools the caller
//! may see.
//!
//! The index (each tool's weighted term counts) is built once per snapshot. Document
//! frequencies and the average length are taken at query time over the caller's tools alone,
//! so the order of what a caller finds says nothing about tools it may not see.

use rustc_hash::FxHashMap;

use crate::def::Tool;

/// BM25's term-frequency saturation.
const K1: f32 = 1.2;
/// BM25's length normalization.
const B: f32 = 0.75;

/// How much a term counts in each field.
const NAME: f32 = 3.0;
const TAG: f32 = 2.0;
const CATEGORY: f32 = 2.0;
const DESCRIPTION: f32 = 1.0;
const ARGUMENT: f32 = 1.0;

/// The tools of one snapshot, indexed by term.
pub(crate) struct Index {
    /// Each term's tools, by position in the snapshot, with the term's weighted count.
    postings: FxHashMap<String, Vec<(u32, f32)>>,
    /// Each tool's weighted length.
    lengths: Vec<f32>,
}

impl Index {
    /// Indexes `tools` (a snapshot's, in its order).
    pub(crate) fn build(tools: &[Tool]) -> Self {
        let mut postings: FxHashMap<String, Vec<(u32, f32)>> = FxHashMap::default();
        let mut lengths = Vec::with_capacity(tools.len());
        for (i, tool) in tools.iter().enumerate() {
            let mut counts: FxHashMap<String, f32> = FxHashMap::default();
            let mut add = |text: &str, weight: f32| {
                for term in terms(text) {
                    *counts.entry(term).or_default() += weight;
                }
            };
            add(tool.name(), NAME);
            for alias in tool.aliases() {
                add(alias, NAME);
            }
            add(tool.short_description(), DESCRIPTION);
            for tag in tool.tags() {
                add(tag, TAG);
            }
            if let Some(category) = tool.category() {
                add(category, CATEGORY);
            }
            for argument in argument_names(tool) {
                add(&argument, ARGUMENT);
            }
            lengths.push(counts.values().sum());
            for (term, count) in counts {
                postings.entry(term).or_default().push((i as u32, count));
            }
        }
        Self { postings, lengths }
    }

    /// The positions of the tools `visible` admits that match `query`, best first (ties in
    /// snapshot order, which is name order), at most `limit`.
    pub(crate) fn search(
        &self,
        query: &str,
        limit: usize,
        visible: impl Fn(usize) -> bool,
    ) -> Vec<usize> {
        let seen: Vec<bool> = (0..self.lengths.len()).map(&visible).collect();
        let count = seen.iter().filter(|&&v| v).count();
        if count == 0 {
            return Vec::new();
        }
        let average = (self.lengths.iter().zip(&seen))
            .filter(|(_, v)| **v)
            .map(|(l, _)| *l)
            .sum::<f32>()
            / count as f32;
        let mut query_terms: Vec<String> = terms(query).collect();
        query_terms.sort_unstable();
        query_terms.dedup();
        let mut scores: FxHashMap<usize, f32> = FxHashMap::default();
        for term in &query_terms {
            let Some(postings) = self.postings.get(term) else {
                continue;
            };
            let postings: Vec<(usize, f32)> = (postings.iter())
                .map(|&(i, tf)| (i as usize, tf))
                .filter(|&(i, _)| seen[i])
                .collect();
            let df = postings.len() as f32;
            let idf = (1.0 + (count as f32 - df + 0.5) / (df + 0.5)).ln();
            for (i, tf) in postings {
                let norm = K1 * (1.0 - B + B * self.lengths[i] / average.max(f32::EPSILON));
                *scores.entry(i).or_default() += idf * tf * (K1 + 1.0) / (tf + norm);
            }
        }
        let mut ranked: Vec<(usize, f32)> = scores.into_iter().collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked.into_iter().take(limit).map(|(i, _)| i).collect()
    }
}

/// The top-level argument names of a tool's input schema.
fn argument_names(tool: &Tool) -> Vec<String> {
    (tool.input_schema().as_value().get("properties"))
        .and_then(serde_json::Value::as_object)
        .map(|properties| properties.keys().cloned().collect())
        .unwrap_or_default()
}

/// The terms of a text: its words and identifier parts (`file_manager.createDocument` gives
/// `file`, `manager`, `create`, `document`), lowercased, a plural `s` dropped.
pub(crate) fn terms(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .flat_map(split_camel)
        .filter(|word| !word.is_empty())
        .map(|word| stem(&word.to_lowercase()))
}

/// `createDocument` as `create`, `Document`.
fn split_camel(word: &str) -> impl Iterator<Item = &str> + '_ {
    let mut start = 0;
    let mut parts = Vec::new();
    let chars: Vec<(usize, char)> = word.char_indices().collect();
    for pair in chars.windows(2) {
        let ((_, a), (j, b)) = (pair[0], pair[1]);
        if a.is_lowercase() && b.is_uppercase() {
            parts.push(&word[start..j]);
            start = j;
        }
    }
    parts.push(&word[start..]);
    parts.into_iter()
}

/// A plural `s` dropped (`files` -> `file`, not `class` or `is`).
fn stem(word: &str) -> String {
    match word.strip_suffix('s') {
        Some(stem) if word.chars().count() > 3 && !stem.ends_with('s') => stem.to_owned(),
        _ => word.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::terms;

    #[test]
    fn identifiers_split_into_words() {
        let found: Vec<String> = terms("file_manager.createDocument lists Files; class").collect();
        assert_eq!(
            found,
            [
                "file", "manager", "create", "document", "list", "file", "class"
            ]
        );
    }
}

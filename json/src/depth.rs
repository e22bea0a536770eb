//! Values of any depth: how deep a value may nest, measured and dropped without recursion.

use serde_json::Value;

/// How deep arrays and objects may nest in any value read from a model or a caller: 127 levels,
/// the most that `serde_json` reads from text (its recursion limit is 128), so that text and
/// [`Value`]s meet the same bound. The registry's argument depth, the parser's and the schema
/// walks' bound on the values a schema is applied to are this one constant.
pub const MAX_DEPTH: usize = 127;

/// Whether arrays and objects nest more than `limit` levels deep in `value`, found with an
/// explicit stack of at most `limit` levels.
#[inline]
pub fn nests_deeper(value: &Value, limit: usize) -> bool {
    enum Children<'v> {
        Array(std::slice::Iter<'v, Value>),
        Object(serde_json::map::Values<'v>),
    }
    let mut stack: Vec<Children<'_>> = Vec::new();
    let mut current = value;
    loop {
        let children = match current {
            Value::Array(items) => Some(Children::Array(items.iter())),
            Value::Object(map) => Some(Children::Object(map.values())),
            _ => None,
        };
        if let Some(children) = children {
            if stack.len() == limit {
                return true;
            }
            stack.push(children);
        }
        current = loop {
            let Some(top) = stack.last_mut() else {
                return false;
            };
            let next = match top {
                Children::Array(items) => items.next(),
                Children::Object(values) => values.next(),
            };
            match next {
                Some(next) => break next,
                None => {
                    stack.pop();
                }
            }
        };
    }
}

/// The length of `value` as serde_json writes it (compact), counted as it is written, without
/// keeping it. Recurses as serde_json's writer does: for values of bounded depth.
pub fn written_len<T: serde::Serialize + ?Sized>(value: &T) -> usize {
    /// Counts what is written.
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// What [`measure`] found past its bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exceeds {
    /// Arrays and objects nest deeper than the depth bound.
    Depth,
    /// The compact JSON text is longer than the byte bound.
    Bytes,
}

/// The length of `value` as compact JSON text (what `serde_json::to_string` writes), found in
/// one walk that also bounds its depth: [`Exceeds::Depth`] once arrays and objects nest deeper
/// than `max_depth`, [`Exceeds::Bytes`] once the text would be longer than `max_bytes`. Nothing
/// is written or allocated; the walk recurses at most `max_depth` levels and stops at the first
/// bound passed, so a value past both may be reported for either.
pub fn measure(value: &Value, max_depth: usize, max_bytes: usize) -> Result<usize, Exceeds> {
    let mut size = Size {
        left: max_bytes,
        depth_left: max_depth,
    };
    size.value(value)?;
    Ok(max_bytes - size.left)
}

/// [`measure`]'s walk: the bytes and levels still allowed.
struct Size {
    left: usize,
    depth_left: usize,
}

impl Size {
    #[inline]
    fn take(&mut self, bytes: usize) -> Result<(), Exceeds> {
        self.left = self.left.checked_sub(bytes).ok_or(Exceeds::Bytes)?;
        Ok(())
    }

    fn value(&mut self, value: &Value) -> Result<(), Exceeds> {
        match value {
            Value::Null | Value::Bool(true) => self.take(4),
            Value::Bool(false) => self.take(5),
            Value::Number(number) => self.take(number_len(number)),
            Value::String(text) => self.take(string_len(text)),
            Value::Array(items) => {
                self.enter()?;
                self.take(2 + items.len().saturating_sub(1))?;
                for item in items {
                    self.value(item)?;
                }
                self.depth_left += 1;
                Ok(())
            }
            Value::Object(map) => {
                self.enter()?;
                // Braces, a colon for each member and a comma between them.
                self.take(2 + map.len() + map.len().saturating_sub(1))?;
                for (key, item) in map {
                    self.take(string_len(key))?;
                    self.value(item)?;
                }
                self.depth_left += 1;
                Ok(())
            }
        }
    }

    #[inline]
    fn enter(&mut self) -> Result<(), Exceeds> {
        self.depth_left = self.depth_left.checked_sub(1).ok_or(Exceeds::Depth)?;
        Ok(())
    }
}

/// A number's length as serde_json writes it. Not inlined: [`Size::value`] recurses, and its
/// frame stays small.
#[inline(never)]
fn number_len(number: &serde_json::Number) -> usize {
    if let Some(n) = number.as_u64() {
        return digits(n);
    }
    if let Some(n) = number.as_i64() {
        return 1 + digits(n.unsigned_abs());
    }
    written_len(number)
}

fn digits(mut n: u64) -> usize {
    let mut digits = 1;
    while n >= 10 {
        n /= 10;
        digits += 1;
    }
    digits
}

/// A string's length as serde_json writes it: quoted, with `"` and `\` escaped, the control
/// characters with a short escape (`\b`, `\t`, `\n`, `\f`, `\r`) in two bytes and the others
/// as `\u00XX` in six. Not inlined, as [`number_len`].
#[inline(never)]
fn string_len(text: &str) -> usize {
    let mut len = 2 + text.len();
    for &byte in text.as_bytes() {
        match byte {
            b'"' | b'\\' | 0x08 | 0x09 | 0x0a | 0x0c | 0x0d => len += 1,
            0x00..=0x1f => len += 5,
            _ => {}
        }
    }
    len
}

/// Drops `value` without recursion: each array and object is emptied onto a heap stack before
/// it is dropped, so no drop goes deeper than one level.
#[inline]
pub fn dispose(value: Value) {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.into_iter().map(|(_, value)| value)),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::{Value, json};

    use super::{Exceeds, measure};

    fn arbitrary() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            any::<u64>().prop_map(|n| json!(n)),
            any::<f64>()
                .prop_filter("finite", |n| n.is_finite())
                .prop_map(|n| json!(n)),
            any::<String>().prop_map(Value::String),
            "[\\x00-\\x1f\"\\\\a-z\u{e9}\u{1F600}]{0,12}".prop_map(Value::String),
        ];
        leaf.prop_recursive(6, 64, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::btree_map("[a-z\"\\\\\n]{0,6}", inner, 0..6)
                    .prop_map(|map| Value::Object(map.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn the_measure_is_the_length_serde_json_writes(value in arbitrary()) {
            let written = serde_json::to_string(&value).unwrap().len();
            prop_assert_eq!(measure(&value, 127, usize::MAX - 1), Ok(written));
            prop_assert_eq!(measure(&value, 127, written), Ok(written));
            prop_assert_eq!(measure(&value, 127, written - 1), Err(Exceeds::Bytes));
        }
    }

    #[test]
    fn depth_is_bounded_as_nests_deeper_bounds_it() {
        let mut value = json!(1);
        for _ in 0..10 {
            value = json!([value]);
        }
        assert_eq!(measure(&value, 10, 1000), Ok(21));
        assert_eq!(measure(&value, 9, 1000), Err(Exceeds::Depth));
        assert!(!super::nests_deeper(&value, 10));
        assert!(super::nests_deeper(&value, 9));
    }
}

//! The serde bridge: any `Serialize`/`Deserialize` type as an untagged subtree of [`Node`]s
//! (being written; see the typed-layer issue).

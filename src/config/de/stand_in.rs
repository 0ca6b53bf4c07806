//! Stand-ins for values already reported as wrong or missing.

use std::ops::Range;

use serde::de::value::{BorrowedStrDeserializer, MapDeserializer, SeqDeserializer};
use serde::de::{self, Visitor};
use serde::forward_to_deserialize_any;
use serde_spanned::__unstable as spanned;

use super::error::DeError;
use super::SpannedMap;

/// A value standing in for one already reported as wrong (or missing): it
/// deserializes as whatever is asked, so the rest of the file can still be
/// checked. Its errors are consequences and never shown.
pub(super) struct StandIn(pub(super) Range<usize>);

macro_rules! stand_in {
    ($($method:ident => $visit:ident($($arg:expr)?);)*) => {$(
        fn $method<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
            v.$visit($($arg)?).map_err(DeError::stand_in)
        }
    )*};
}

impl<'a> de::Deserializer<'a> for StandIn {
    type Error = DeError;

    stand_in! {
        deserialize_any => visit_bool(false);
        deserialize_bool => visit_bool(false);
        deserialize_i8 => visit_i64(1);
        deserialize_i16 => visit_i64(1);
        deserialize_i32 => visit_i64(1);
        deserialize_i64 => visit_i64(1);
        deserialize_u8 => visit_u64(1);
        deserialize_u16 => visit_u64(1);
        deserialize_u32 => visit_u64(1);
        deserialize_u64 => visit_u64(1);
        deserialize_f32 => visit_f64(1.0);
        deserialize_f64 => visit_f64(1.0);
        deserialize_char => visit_char('x');
        deserialize_str => visit_borrowed_str("");
        deserialize_string => visit_borrowed_str("");
        deserialize_identifier => visit_borrowed_str("");
        deserialize_bytes => visit_borrowed_bytes(&[]);
        deserialize_byte_buf => visit_borrowed_bytes(&[]);
        deserialize_option => visit_none();
        deserialize_unit => visit_unit();
        deserialize_ignored_any => visit_unit();
    }

    fn deserialize_seq<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        v.visit_seq(SeqDeserializer::new(std::iter::empty::<()>()))
            .map_err(DeError::stand_in)
    }

    fn deserialize_map<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        v.visit_map(MapDeserializer::new(std::iter::empty::<((), ())>()))
            .map_err(DeError::stand_in)
    }

    fn deserialize_struct<V: Visitor<'a>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, DeError> {
        if spanned::is_spanned(name, fields) {
            let span = self.0.clone();
            return v.visit_map(SpannedMap::new(span, self));
        }
        self.deserialize_map(v)
    }

    fn deserialize_enum<V: Visitor<'a>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, DeError> {
        let first = variants.first().copied().unwrap_or_default();
        v.visit_enum(BorrowedStrDeserializer::<DeError>::new(first))
            .map_err(DeError::stand_in)
    }

    fn deserialize_newtype_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        v: V,
    ) -> Result<V::Value, DeError> {
        v.visit_newtype_struct(self).map_err(DeError::stand_in)
    }

    forward_to_deserialize_any! { <V: Visitor<'a>> unit_struct tuple tuple_struct }
}

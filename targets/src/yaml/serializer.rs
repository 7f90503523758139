//! The serde glue: the `Serializer` of a node ([`Node`]), of the document, which must be a
//! mapping (`&mut Writer`), and of a mapping key ([`KeyName`]), and the `SerializeX` of an
//! open mapping or sequence ([`Compound`]). What a serializer leaves to serde_yaml is refused
//! by one table of signatures (`refuse!`), so each trait body is written once.

use serde::ser::{self, Impossible, Serialize};

use super::block::{Compound, Node, Place, Writer};
use super::error::Unsupported;

/// The `Serializer` methods named, each refusing its value as [`Unsupported`] (the caller
/// then asks serde_yaml). One arm per method: the signatures are spelled here only.
macro_rules! refuse {
    ($($method:ident),* $(,)?) => { $(refuse!(@ $method);)* };
    (@ serialize_bool) => { refuse!(@ serialize_bool: bool); };
    (@ serialize_i8) => { refuse!(@ serialize_i8: i8); };
    (@ serialize_i16) => { refuse!(@ serialize_i16: i16); };
    (@ serialize_i32) => { refuse!(@ serialize_i32: i32); };
    (@ serialize_i64) => { refuse!(@ serialize_i64: i64); };
    (@ serialize_u8) => { refuse!(@ serialize_u8: u8); };
    (@ serialize_u16) => { refuse!(@ serialize_u16: u16); };
    (@ serialize_u32) => { refuse!(@ serialize_u32: u32); };
    (@ serialize_u64) => { refuse!(@ serialize_u64: u64); };
    (@ serialize_f32) => { refuse!(@ serialize_f32: f32); };
    (@ serialize_f64) => { refuse!(@ serialize_f64: f64); };
    (@ serialize_char) => { refuse!(@ serialize_char: char); };
    (@ serialize_str) => { refuse!(@ serialize_str: &str); };
    (@ serialize_bytes) => { refuse!(@ serialize_bytes: &[u8]); };
    (@ serialize_unit_struct) => { refuse!(@ serialize_unit_struct: &'static str); };
    (@ $method:ident: $value:ty) => {
        fn $method(self, _: $value) -> Result<Self::Ok, Unsupported> {
            Err(Unsupported)
        }
    };
    (@ serialize_none) => {
        fn serialize_none(self) -> Result<Self::Ok, Unsupported> {
            Err(Unsupported)
        }
    };
    (@ serialize_unit) => {
        fn serialize_unit(self) -> Result<Self::Ok, Unsupported> {
            Err(Unsupported)
        }
    };
    (@ serialize_some) => {
        fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<Self::Ok, Unsupported> {
            Err(Unsupported)
        }
    };
    (@ serialize_unit_variant) => {
        fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Result<Self::Ok, Unsupported> {
            Err(Unsupported)
        }
    };
    (@ serialize_newtype_variant) => {
        fn serialize_newtype_variant<T: Serialize + ?Sized>(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: &T,
        ) -> Result<Self::Ok, Unsupported> {
            Err(Unsupported)
        }
    };
    (@ serialize_seq) => {
        fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Unsupported> {
            Err(Unsupported)
        }
    };
    (@ serialize_tuple) => {
        fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Unsupported> {
            Err(Unsupported)
        }
    };
    (@ serialize_tuple_struct) => {
        fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeTupleStruct, Unsupported> {
            Err(Unsupported)
        }
    };
    (@ serialize_tuple_variant) => {
        fn serialize_tuple_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeTupleVariant, Unsupported> {
            Err(Unsupported)
        }
    };
    (@ serialize_map) => {
        fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Unsupported> {
            Err(Unsupported)
        }
    };
    (@ serialize_struct) => {
        fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, Unsupported> {
            Err(Unsupported)
        }
    };
    (@ serialize_struct_variant) => {
        fn serialize_struct_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeStructVariant, Unsupported> {
            Err(Unsupported)
        }
    };
}

/// Integer methods that write their value as the wider integer of the same sign, whose text
/// is the same.
macro_rules! widen {
    ($($method:ident($narrow:ty) => $wide_method:ident($wide:ty)),* $(,)?) => {
        $(
            fn $method(self, value: $narrow) -> Result<(), Unsupported> {
                self.$wide_method(<$wide>::from(value))
            }
        )*
    };
}

impl<'w, 'a> ser::Serializer for Node<'w, 'a> {
    type Ok = ();
    type Error = Unsupported;
    type SerializeSeq = Compound<'w, 'a>;
    type SerializeTuple = Compound<'w, 'a>;
    type SerializeTupleStruct = Compound<'w, 'a>;
    type SerializeTupleVariant = Impossible<(), Unsupported>;
    type SerializeMap = Compound<'w, 'a>;
    type SerializeStruct = Compound<'w, 'a>;
    type SerializeStructVariant = Impossible<(), Unsupported>;

    // A char or bytes are rare and styled otherwise; data in a variant becomes a YAML tag.
    refuse!(serialize_char, serialize_bytes, serialize_newtype_variant, serialize_tuple_variant, serialize_struct_variant);
    widen!(
        serialize_i8(i8) => serialize_i64(i64),
        serialize_i16(i16) => serialize_i64(i64),
        serialize_i32(i32) => serialize_i64(i64),
        serialize_u8(u8) => serialize_u64(u64),
        serialize_u16(u16) => serialize_u64(u64),
        serialize_u32(u32) => serialize_u64(u64),
        serialize_f32(f32) => serialize_f64(f64),
    );

    fn serialize_bool(self, value: bool) -> Result<(), Unsupported> {
        self.writer.scalar(self.place, if value { "true" } else { "false" });
        Ok(())
    }
    fn serialize_i64(self, value: i64) -> Result<(), Unsupported> {
        self.writer.scalar(self.place, &value.to_string());
        Ok(())
    }
    fn serialize_u64(self, value: u64) -> Result<(), Unsupported> {
        self.writer.scalar(self.place, &value.to_string());
        Ok(())
    }
    fn serialize_f64(self, value: f64) -> Result<(), Unsupported> {
        // Rare in objects: serde_yaml's own float text (ryu, `.inf`, `.nan`) is reused.
        let document = serde_yaml::to_string(&value).map_err(|_| Unsupported)?;
        self.writer.scalar(self.place, document.trim_end_matches('\n'));
        Ok(())
    }
    fn serialize_str(self, value: &str) -> Result<(), Unsupported> {
        self.writer.string(self.place, value)
    }
    fn serialize_none(self) -> Result<(), Unsupported> {
        self.serialize_unit()
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Unsupported> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Unsupported> {
        self.writer.scalar(self.place, "null");
        Ok(())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Unsupported> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<(), Unsupported> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, value: &T) -> Result<(), Unsupported> {
        value.serialize(self)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Compound<'w, 'a>, Unsupported> {
        let column = Writer::dash_column(self.place);
        Ok(self.compound(column))
    }
    fn serialize_tuple(self, len: usize) -> Result<Compound<'w, 'a>, Unsupported> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Compound<'w, 'a>, Unsupported> {
        self.serialize_seq(Some(len))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Compound<'w, 'a>, Unsupported> {
        let column = Writer::key_column(self.place);
        Ok(self.compound(column))
    }
    fn serialize_struct(self, _: &'static str, len: usize) -> Result<Compound<'w, 'a>, Unsupported> {
        self.serialize_map(Some(len))
    }
}

/// The document: a mapping whose entries start at column 0, so that the object list can put
/// its header before them. Anything else is left to serde_yaml.
impl<'w, 'a> ser::Serializer for &'w mut Writer<'a> {
    type Ok = ();
    type Error = Unsupported;
    type SerializeSeq = Impossible<(), Unsupported>;
    type SerializeTuple = Impossible<(), Unsupported>;
    type SerializeTupleStruct = Impossible<(), Unsupported>;
    type SerializeTupleVariant = Impossible<(), Unsupported>;
    type SerializeMap = Compound<'w, 'a>;
    type SerializeStruct = Compound<'w, 'a>;
    type SerializeStructVariant = Impossible<(), Unsupported>;

    refuse!(
        serialize_bool,
        serialize_i8,
        serialize_i16,
        serialize_i32,
        serialize_i64,
        serialize_u8,
        serialize_u16,
        serialize_u32,
        serialize_u64,
        serialize_f32,
        serialize_f64,
        serialize_char,
        serialize_str,
        serialize_bytes,
        serialize_none,
        serialize_unit,
        serialize_unit_struct,
        serialize_unit_variant,
        serialize_newtype_variant,
        serialize_seq,
        serialize_tuple,
        serialize_tuple_struct,
        serialize_tuple_variant,
        serialize_struct_variant,
    );

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Unsupported> {
        value.serialize(self)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, value: &T) -> Result<(), Unsupported> {
        value.serialize(self)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Compound<'w, 'a>, Unsupported> {
        Ok(Node { writer: self, place: Place::Root }.compound(0))
    }
    fn serialize_struct(self, _: &'static str, len: usize) -> Result<Compound<'w, 'a>, Unsupported> {
        self.serialize_map(Some(len))
    }
}

/// Takes a mapping key: a string or a unit variant, nothing else.
struct KeyName;

impl ser::Serializer for KeyName {
    type Ok = String;
    type Error = Unsupported;
    type SerializeSeq = Impossible<String, Unsupported>;
    type SerializeTuple = Impossible<String, Unsupported>;
    type SerializeTupleStruct = Impossible<String, Unsupported>;
    type SerializeTupleVariant = Impossible<String, Unsupported>;
    type SerializeMap = Impossible<String, Unsupported>;
    type SerializeStruct = Impossible<String, Unsupported>;
    type SerializeStructVariant = Impossible<String, Unsupported>;

    refuse!(
        serialize_bool,
        serialize_i8,
        serialize_i16,
        serialize_i32,
        serialize_i64,
        serialize_u8,
        serialize_u16,
        serialize_u32,
        serialize_u64,
        serialize_f32,
        serialize_f64,
        serialize_char,
        serialize_bytes,
        serialize_none,
        serialize_some,
        serialize_unit,
        serialize_unit_struct,
        serialize_newtype_variant,
        serialize_seq,
        serialize_tuple,
        serialize_tuple_struct,
        serialize_tuple_variant,
        serialize_map,
        serialize_struct,
        serialize_struct_variant,
    );

    fn serialize_str(self, value: &str) -> Result<String, Unsupported> {
        Ok(value.to_owned())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<String, Unsupported> {
        Ok(variant.to_owned())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, value: &T) -> Result<String, Unsupported> {
        value.serialize(self)
    }
}

/// A sequence's `SerializeX` (`SerializeSeq`, `SerializeTuple`, `SerializeTupleStruct`): each
/// element is an item, the end closes the sequence.
macro_rules! sequence {
    ($($trait:ident :: $method:ident),* $(,)?) => {
        $(
            impl ser::$trait for Compound<'_, '_> {
                type Ok = ();
                type Error = Unsupported;
                fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unsupported> {
                    self.item(value)
                }
                fn end(self) -> Result<(), Unsupported> {
                    self.end_sequence()
                }
            }
        )*
    };
}

sequence!(SerializeSeq::serialize_element, SerializeTuple::serialize_element, SerializeTupleStruct::serialize_field);

impl ser::SerializeMap for Compound<'_, '_> {
    type Ok = ();
    type Error = Unsupported;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Unsupported> {
        self.key(&key.serialize(KeyName)?)
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unsupported> {
        self.value(value)
    }
    fn end(self) -> Result<(), Unsupported> {
        self.end_mapping()
    }
}

impl ser::SerializeStruct for Compound<'_, '_> {
    type Ok = ();
    type Error = Unsupported;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), Unsupported> {
        self.key(key)?;
        self.value(value)
    }
    fn end(self) -> Result<(), Unsupported> {
        self.end_mapping()
    }
}

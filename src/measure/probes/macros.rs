//! The declaration macros every probe module uses: its variants as a unit
//! enum, a probe's declaration, and `Described` for a probe of several
//! instances.

/// Declares a probe's variants as a unit enum: each variant's name, the
/// params its JSON carries, and which one is the baseline. `ALL` lists
/// them in report order.
macro_rules! named_configs {
    (
        $(#[$meta:meta])*
        $vis:vis enum $ty:ident (baseline $base:ident) {
            $($variant:ident => $name:literal $params:tt),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        $vis enum $ty {
            $($variant),+
        }

        impl $ty {
            #[allow(dead_code)]
            pub const ALL: &'static [$ty] = &[$($ty::$variant),+];
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(match self {
                    $($ty::$variant => $name),+
                })
            }
        }

        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let params = match self {
                    $($ty::$variant => serde_json::json!($params)),+
                };
                params.serialize(s)
            }
        }

        impl $crate::measure::probes::Config for $ty {
            fn listed() -> Vec<$ty> {
                $ty::ALL.to_vec()
            }

            fn role(&self) -> $crate::measure::probes::Role {
                $crate::measure::probes::Role::baseline_if(*self == $ty::$base)
            }
        }
    };
}

/// Declares a probe of one instance: its doc comment is its summary, and
/// the id, seed, item and requirements follow the struct's name. A probe of
/// several instances (one per size, sink, ...) holds its declaration in a
/// field and implements `Described` itself.
macro_rules! probe {
    (
        $(#[doc = $doc:literal])+
        $vis:vis struct $name:ident: $id:literal, seed $seed:literal, item $item:literal
        $(, requires [$($requirement:literal),+ $(,)?])? $(,)?;
    ) => {
        $(#[doc = $doc])+
        $vis struct $name;

        impl $crate::measure::probes::Described for $name {
            fn declaration(&self) -> &$crate::measure::probes::Declaration {
                const DECLARATION: $crate::measure::probes::Declaration =
                    $crate::measure::probes::Declaration::new($id, $seed, $item)
                        .summary(concat!($($doc),+))
                        $(.requires(&[$($requirement),+]))?;
                &DECLARATION
            }
        }
    };
}

/// `Described` for a probe of several instances that holds its declaration
/// in a field named `declaration`.
macro_rules! described_by_field {
    ($ty:ty) => {
        impl $crate::measure::probes::Described for $ty {
            fn declaration(&self) -> &$crate::measure::probes::Declaration {
                &self.declaration
            }
        }
    };
}

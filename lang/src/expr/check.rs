//! The type checker: untyped syntax to the typed [`Node`] tree, with E014 diagnostics that
//! point at the operand at fault and suggest the closest feature or function name.
//!
//! Invariant: it reports every type error it can find in one pass (an ill-typed operand
//! does not hide errors in its siblings) and returns a tree only when there are none.

use super::ast::{Arith, Compare, Function, Logic, Node};
use super::catalogue::{Category, JobParam, NodeFeature, Type};
use super::syntax::{BinaryOp, Syntax, SyntaxKind, UnaryOp};
use crate::codes::Code;
use crate::diag::{Diagnostic, Diagnostics};
use crate::span::Span;
use crate::suggest;

/// Checks `syntax` (parsed from the text at `span`) and returns its tree and type.
pub fn check(syntax: &Syntax, span: Span, diagnostics: &mut Diagnostics) -> Option<(Node, Type)> {
    Checker { span, diagnostics }.infer(syntax)
}

struct Checker<'a> {
    span: Span,
    diagnostics: &'a mut Diagnostics,
}

/// What a syntax node turned out to be before its context is known: bare names such as
/// `high` only get a meaning from the categorical they are compared with.
enum Typed {
    Value(Node, Type),
    Level(String),
}

impl Checker<'_> {
    fn at(&self, syntax: &Syntax) -> Span {
        self.span.sub(syntax.start, syntax.end)
    }

    fn error(&mut self, syntax: &Syntax, message: String, label: &str, help: Option<String>) {
        let diagnostic = Diagnostic::error(Code::ExpressionType, self.at(syntax), message).label(label).maybe_help(help);
        self.diagnostics.push(diagnostic);
    }

    fn infer(&mut self, syntax: &Syntax) -> Option<(Node, Type)> {
        match self.typed(syntax)? {
            Typed::Value(node, ty) => Some((node, ty)),
            Typed::Level(name) => {
                self.unknown_name(syntax, &name);
                None
            }
        }
    }

    fn expect(&mut self, syntax: &Syntax, wanted: Type) -> Option<Node> {
        let (node, ty) = self.infer(syntax)?;
        if ty != wanted {
            self.error(
                syntax,
                format!("expected a {}, found a {}", wanted.as_str(), ty.as_str()),
                &format!("this is a {}", ty.as_str()),
                conversion_help(ty, wanted),
            );
            return None;
        }
        Some(node)
    }

    fn typed(&mut self, syntax: &Syntax) -> Option<Typed> {
        match &syntax.kind {
            SyntaxKind::Number(value) => Some(Typed::Value(Node::Const(*value), Type::Number)),
            SyntaxKind::Path(segments) => self.path(syntax, segments),
            SyntaxKind::Unary(op, operand) => {
                let (wanted, build): (Type, fn(Box<Node>) -> Node) = match op {
                    UnaryOp::Neg => (Type::Number, Node::Neg),
                    UnaryOp::Not => (Type::Bool, Node::Not),
                };
                let node = self.expect(operand, wanted)?;
                Some(Typed::Value(build(Box::new(node)), wanted))
            }
            SyntaxKind::Binary(op, left, right) => self.binary(*op, left, right).map(|(node, ty)| Typed::Value(node, ty)),
            SyntaxKind::Call { name, name_range, args } => {
                let name_syntax = Syntax { kind: SyntaxKind::Number(0.0), start: name_range.0, end: name_range.1 };
                let Some(function) = Function::lookup(name) else {
                    let help = suggest::help_for(name, Function::ALL.iter().map(|function| function.name()));
                    self.error(&name_syntax, format!("unknown function `{name}`"), "not a function", help);
                    return None;
                };
                self.call(function, syntax, args).map(|(node, ty)| Typed::Value(node, ty))
            }
        }
    }

    fn path(&mut self, syntax: &Syntax, segments: &[String]) -> Option<Typed> {
        match segments {
            [single] if single == "true" => Some(Typed::Value(Node::Bool(true), Type::Bool)),
            [single] if single == "false" => Some(Typed::Value(Node::Bool(false), Type::Bool)),
            [single] => Some(Typed::Level(single.clone())),
            [scope, name] if NodeFeature::ALL.iter().any(|feature| feature.scope() == scope) => match NodeFeature::lookup(scope, name) {
                Some(feature) => Some(Typed::Value(Node::Feature(feature), feature.ty())),
                None => {
                    let in_scope = NodeFeature::ALL.iter().filter(|feature| feature.scope() == scope).map(|feature| feature.name());
                    let help = suggest::help_for(name, in_scope);
                    self.error(syntax, format!("unknown {scope} feature `{scope}.{name}`"), "no such feature", help);
                    None
                }
            },
            [scope, name] if scope == "job" => match JobParam::lookup(scope, name) {
                Some(param) => Some(Typed::Value(Node::Param(param), param.ty())),
                None => {
                    let help = suggest::help_for(name, JobParam::ALL.iter().map(|param| param.name()));
                    self.error(syntax, format!("unknown job parameter `job.{name}`"), "no such parameter", help);
                    None
                }
            },
            _ => {
                self.unknown_name(syntax, &segments.join("."));
                None
            }
        }
    }

    fn unknown_name(&mut self, syntax: &Syntax, name: &str) {
        let qualified =
            NodeFeature::ALL.iter().map(|feature| feature.qualified_name()).chain(JobParam::ALL.iter().map(|param| param.qualified_name()));
        let help = suggest::did_you_mean(name, qualified.clone())
            .or_else(|| {
                let bare = name.rsplit('.').next().unwrap_or(name);
                qualified.clone().find(|candidate| candidate.rsplit('.').next() == Some(bare))
            })
            .map(|best| format!("did you mean `{best}`?"))
            .or_else(|| Some("features are written `node.<name>`, `domain.<name>` or `job.<name>` (see docs/expressions.md)".to_owned()));
        self.error(syntax, format!("unknown name `{name}`"), "not a feature, parameter or value here", help);
    }

    fn binary(&mut self, op: BinaryOp, left: &Syntax, right: &Syntax) -> Option<(Node, Type)> {
        let arith = |kind: Arith| (kind, Type::Number);
        let (node, ty) = match op {
            BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div => {
                let (kind, ty) = match op {
                    BinaryOp::Add => arith(Arith::Add),
                    BinaryOp::Sub => arith(Arith::Sub),
                    BinaryOp::Mul => arith(Arith::Mul),
                    _ => arith(Arith::Div),
                };
                let left_node = self.expect(left, Type::Number);
                let right_node = self.expect(right, Type::Number);
                (Node::Arith(kind, Box::new(left_node?), Box::new(right_node?)), ty)
            }
            BinaryOp::And | BinaryOp::Or => {
                let kind = if op == BinaryOp::And { Logic::And } else { Logic::Or };
                let left_node = self.expect(left, Type::Bool);
                let right_node = self.expect(right, Type::Bool);
                (Node::Logic(kind, Box::new(left_node?), Box::new(right_node?)), Type::Bool)
            }
            BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => {
                let kind = match op {
                    BinaryOp::Lt => Compare::Lt,
                    BinaryOp::Le => Compare::Le,
                    BinaryOp::Gt => Compare::Gt,
                    _ => Compare::Ge,
                };
                let left_node = self.expect(left, Type::Number);
                let right_node = self.expect(right, Type::Number);
                (Node::Compare(kind, Box::new(left_node?), Box::new(right_node?)), Type::Bool)
            }
            BinaryOp::Eq | BinaryOp::Ne => return self.equality(op == BinaryOp::Eq, left, right),
        };
        Some((node, ty))
    }

    fn equality(&mut self, equal: bool, left: &Syntax, right: &Syntax) -> Option<(Node, Type)> {
        let left_typed = self.typed(left);
        let right_typed = self.typed(right);
        let (left_typed, right_typed) = (left_typed?, right_typed?);
        let (left_node, right_node, ty) = match (left_typed, right_typed) {
            (Typed::Value(left_node, left_ty), Typed::Value(right_node, right_ty)) => {
                if left_ty != right_ty {
                    self.error(
                        right,
                        format!("cannot compare a {} with a {}", left_ty.as_str(), right_ty.as_str()),
                        &format!("this is a {}", right_ty.as_str()),
                        Some(format!("both sides of `{}` must have the same type", if equal { "==" } else { "!=" })),
                    );
                    return None;
                }
                (left_node, right_node, left_ty)
            }
            (Typed::Value(node, ty), Typed::Level(level)) => (node, self.level(ty, &level, right)?, ty),
            (Typed::Level(level), Typed::Value(node, ty)) => (self.level(ty, &level, left)?, node, ty),
            (Typed::Level(level), Typed::Level(_)) => {
                self.unknown_name(left, &level);
                return None;
            }
        };
        let (left_node, right_node) = (Box::new(left_node), Box::new(right_node));
        let node = match (ty, equal) {
            (Type::Bool, true) => Node::Logic(Logic::Eq, left_node, right_node),
            (Type::Bool, false) => Node::Logic(Logic::Ne, left_node, right_node),
            (_, true) => Node::Compare(Compare::Eq, left_node, right_node),
            (_, false) => Node::Compare(Compare::Ne, left_node, right_node),
        };
        Some((node, Type::Bool))
    }

    /// The code of the bare name `level` as a value of `ty`, compared at `syntax`.
    fn level(&mut self, ty: Type, level: &str, syntax: &Syntax) -> Option<Node> {
        let Type::Category(category) = ty else {
            self.unknown_name(syntax, level);
            return None;
        };
        let Some(levels) = category.levels() else {
            self.error(
                syntax,
                format!("`{level}` cannot be compared with a {}: its values are interned by the host", category.as_str()),
                "not a feature",
                Some(format!(
                    "compare two {} features, such as `node.{} != job.{}`",
                    category.as_str(),
                    interned_name(category),
                    interned_name(category)
                )),
            );
            return None;
        };
        match category.level_code(level) {
            Some(code) => Some(Node::Const(f64::from(code))),
            None => {
                let help = suggest::help_for(level, levels.iter().copied());
                self.error(syntax, format!("`{level}` is not a {} value", category.as_str()), "unknown value", help);
                None
            }
        }
    }

    fn call(&mut self, function: Function, syntax: &Syntax, args: &[Syntax]) -> Option<(Node, Type)> {
        let arity_ok = match function {
            Function::Min | Function::Max => args.len() >= 2,
            Function::Clamp | Function::If => args.len() == 3,
            Function::Default => args.len() == 2,
            Function::Abs | Function::Sqrt | Function::Floor | Function::Ceil | Function::Round | Function::Missing => args.len() == 1,
        };
        if !arity_ok {
            self.error(
                syntax,
                format!("`{}` does not take {} argument{}", function.name(), args.len(), if args.len() == 1 { "" } else { "s" }),
                "wrong number of arguments",
                Some(format!("the signature is `{}`", function.signature())),
            );
            return None;
        }
        match function {
            Function::If => {
                let condition = self.expect(&args[0], Type::Bool);
                let (then_node, then_ty) = self.infer(&args[1])?;
                let otherwise = self.expect(&args[2], then_ty);
                Some((Node::Call(function, vec![condition?, then_node, otherwise?]), then_ty))
            }
            Function::Missing => {
                let (node, ty) = self.infer(&args[0])?;
                if ty == Type::Bool {
                    self.error(&args[0], "`missing` takes a number or a categorical, found a bool".to_owned(), "this is a bool", None);
                    return None;
                }
                Some((Node::Call(function, vec![node]), Type::Bool))
            }
            Function::Default => {
                let (value, ty) = self.infer(&args[0])?;
                if ty == Type::Bool {
                    self.error(&args[0], "`default` takes a number or a categorical, found a bool".to_owned(), "this is a bool", None);
                    return None;
                }
                let fallback = self.expect(&args[1], ty)?;
                Some((Node::Call(function, vec![value, fallback]), ty))
            }
            _ => {
                let nodes: Vec<Option<Node>> = args.iter().map(|arg| self.expect(arg, Type::Number)).collect();
                let nodes: Option<Vec<Node>> = nodes.into_iter().collect();
                Some((Node::Call(function, nodes?), Type::Number))
            }
        }
    }
}

fn interned_name(category: Category) -> &'static str {
    match category {
        Category::Domain => "nvlink_domain",
        _ => "rack",
    }
}

fn conversion_help(found: Type, wanted: Type) -> Option<String> {
    match (found, wanted) {
        (Type::Number, Type::Bool) => Some("compare it, for example `... > 0`".to_owned()),
        (Type::Bool, Type::Number) => Some("turn a condition into a number with `if(condition, 1, 0)`".to_owned()),
        (Type::Category(category), _) => Some(format!("a {} only compares with `==` and `!=`", category.as_str())),
        _ => None,
    }
}

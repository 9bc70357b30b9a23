//! `param` declarations: the default or the `--set` value, and `where`.

use super::*;

impl Evaluator<'_> {
    pub(super) fn eval_param(&self, p: &ast::ParamDecl) -> R<Value> {
        let cx = Cx {
            module: self.root,
            locals: &[],
            selfcx: None,
        };
        let ty = self.resolve_type(self.root, &p.ty)?;
        let over = self
            .host
            .overrides(self.root)
            .into_iter()
            .find(|o| o.name == p.name.name);
        let value = match &over {
            Some(o) => self.eval_override(o, &ty)?,
            None => self.eval(cx, &p.default, &ty)?,
        };
        if let Some(pred) = &p.where_ {
            let locals = vec![(p.name.name.clone(), value.clone())];
            let pcx = Cx {
                module: self.root,
                locals: &locals,
                selfcx: None,
            };
            match self.eval(pcx, pred, &Ty::Bool)? {
                Value::Bool(true) => {}
                Value::Bool(false) => {
                    let text = self.snippet(self.root, pred.span);
                    let msg = format!(
                        "parameter `{}` = {} violates `where {}`",
                        p.name.name, value, text
                    );
                    let d = match &over {
                        Some(o) => {
                            let mut d = Diagnostic::error(
                                "E0303",
                                Span::new(o.offset as usize, o.offset as usize + o.value.len()),
                                msg,
                            )
                            .with_label(
                                self.host.display_path(self.root),
                                pred.span,
                                "the constraint",
                            );
                            d.at.file = o.file.clone();
                            d
                        }
                        None => Diagnostic::error("E0303", p.default.span, msg)
                            .with_primary_label("this default")
                            .with_label(Arc::from(""), pred.span, "the constraint"),
                    };
                    return Err(self.report(
                        self.root,
                        d.with_help("choose a value that satisfies the constraint"),
                    ));
                }
                other => {
                    return self.err(
                        self.root,
                        "E0201",
                        pred.span,
                        format!("`where` needs a Bool, found {}", other.type_name()),
                    )
                }
            }
        }
        Ok(value)
    }

    pub(super) fn eval_override(&self, o: &crate::Override, ty: &Ty) -> R<Value> {
        let span = Span::new(o.offset as usize, o.offset as usize + o.value.len());
        let mk = |code: &'static str, msg: String| {
            let mut d = Diagnostic::error(code, span, msg);
            d.at.file = o.file.clone();
            d
        };
        if ty.is_string_like() {
            // The value is the text itself; a diagnostic about it points
            // into the command line, not into the module.
            let before = self.diags.borrow().len();
            let r = self.coerce(self.root, Value::str(o.value.as_str()), ty, span);
            for d in self.diags.borrow_mut()[before..].iter_mut() {
                d.at.file = o.file.clone();
            }
            return r;
        }
        // Parse the value as an SCL expression: `let __set = VALUE`.
        let prefix = "let __set = ";
        let source: Arc<str> = format!("{prefix}{}", o.value).into();
        let parse = scl_syntax::parse(&source);
        let expr = match parse.module.decls.first() {
            Some(Decl::Let(l)) if parse.errors.is_empty() => l.value.clone(),
            _ => {
                return Err(self.report(
                    self.root,
                    mk(
                        "E0201",
                        format!("`--set {}={}`: not a valid {} value", o.name, o.value, ty),
                    ),
                ))
            }
        };
        if let ExprKind::Name(n) = &expr.kind {
            if self.items.get(n).is_none() {
                return Err(self.report(
                    self.root,
                    mk("E0201", format!("`--set {}={}`: expected {ty}, found the word `{n}`", o.name, o.value))
                        .with_help(format!("`{}` is {} parameter; give {} value (only String-like parameters take bare text)", o.name, a_type(&ty.to_string()), a_type(&ty.to_string()))),
                ));
            }
        }
        let before = self.diags.borrow().len();
        let cx = Cx {
            module: self.root,
            locals: &[],
            selfcx: None,
        };
        *self.set_text.borrow_mut() = Some(source);
        let r = self.eval(cx, &expr, ty);
        *self.set_text.borrow_mut() = None;
        // Re-point diagnostics from the pseudo-source to the command line.
        let shift = o.offset as i64 - prefix.len() as i64;
        for d in self.diags.borrow_mut()[before..].iter_mut() {
            d.at.file = o.file.clone();
            d.at.span = Span::new(
                (d.at.span.start as i64 + shift).max(0) as usize,
                (d.at.span.end as i64 + shift).max(0) as usize,
            );
        }
        r
    }

    /// The text of a span of module `m`'s source, for messages.
    pub(super) fn snippet(&self, m: ModuleId, span: Span) -> String {
        self.host
            .span_text(m, span)
            .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap_or_default()
    }
}

//! A generator of random but grammatical Lox programs: the grammar fuzzer's inputs (what a
//! grammar-based fuzzer such as a libFuzzer structure-aware mutator feeds a language
//! implementation, instead of bytes that mostly fail in the scanner).
//!
//! Programs use the whole language: global and local variables with shadowing, blocks nested
//! deep (past the compiler's nesting limit now and then), `if`/`else`, `while` and `for`
//! loops, functions with parameters and early returns, recursion, closures that capture and
//! update variables of enclosing functions (and closure makers that return them), classes with
//! initializers, fields, methods, `this`, inheritance, overriding and `super` calls, bound
//! methods, string concatenation (strings doubled into the megabytes), garbage allocated in
//! loops, `and`/`or`/`!`, equality across types, `clock()`, and `print` of every kind of value.
//!
//! The generator tracks the static type of every variable, field, parameter and return value,
//! so a program with no injected error runs to its end: each program draws an error rate, and
//! at that rate an expression is replaced by one of another type ("Operands must be
//! numbers."), a call gets the wrong arity, a name or property is undefined, or a statement is
//! replaced by a compile error (`return` at top level, `this` outside a class, a class that
//! inherits from itself, a duplicate local, ...). Rate 0 (a third of the programs) gives
//! programs that must run without error, unless the heap runs out or recursion overflows the
//! frame stack.
//!
//! Every program terminates: loops count to a literal bound with a counter the body never
//! assigns, and a global `fuel` is spent by every loop iteration and every function or method
//! entry (a function out of fuel returns at once), so recursion and nested calls cannot
//! multiply the work without bound.

use super::rng::Rng;

/// The most doublings of a string that later expressions may use (`"ab"` doubled ten times:
/// 2 KiB, plus its seed); see `strings_doubled`.
const MAX_SHARED_DOUBLINGS: u64 = 10;

/// A static type: what the generator knows about a value.
#[derive(Clone, Debug, PartialEq)]
enum Ty {
    Num,
    Str,
    Bool,
    Nil,
    /// An instance of class `classes[i]`.
    Inst(usize),
    /// A function or bound method taking these parameters and returning this.
    Fun(Vec<Ty>, Box<Ty>),
}

#[derive(Clone, Debug)]
struct Var {
    name: String,
    ty: Ty,
    /// Loop counters and function names are never assigned.
    mutable: bool,
}

#[derive(Clone, Debug)]
struct Method {
    name: String,
    params: Vec<Ty>,
    ret: Ty,
}

#[derive(Clone, Debug)]
struct Class {
    name: String,
    parent: Option<usize>,
    init: Vec<Ty>,
    /// Own fields (set by the initializer), then the parent's are found through `parent`.
    fields: Vec<(String, Ty)>,
    methods: Vec<Method>,
}

/// What the code being generated is inside of.
#[derive(Clone, Debug)]
struct Frame {
    /// The return type of the enclosing function (`None` at top level).
    ret: Option<Ty>,
    /// The class whose method or initializer this is.
    class: Option<usize>,
    /// Inside an initializer (`this` has no fields yet, `return` takes no value).
    init: bool,
}

/// The generator's state for one program.
struct Gen<'r> {
    rng: &'r mut Rng,
    out: String,
    scopes: Vec<Vec<Var>>,
    classes: Vec<Class>,
    frames: Vec<Frame>,
    names: usize,
    /// Statements left to generate.
    statements: usize,
    /// Chance, per mille, that an expression or statement is made wrong.
    error_rate: u64,
    /// Nesting of control structures (blocks, loops, functions) at this point.
    depth: usize,
    line_start: bool,
}

/// A random Lox program (one seed, one program).
pub fn program(rng: &mut Rng) -> String {
    let error_rate = *rng.pick(&[0, 0, 5, 20, 60]);
    let statements = rng.range(5, 120) as usize;
    let mut g = Gen {
        rng,
        out: String::new(),
        scopes: vec![Vec::new()],
        classes: Vec::new(),
        frames: vec![Frame {
            ret: None,
            class: None,
            init: false,
        }],
        names: 0,
        statements,
        error_rate,
        depth: 0,
        line_start: true,
    };
    let fuel = g.rng.range(1000, 50_000);
    g.line(&format!("var fuel = {fuel};"));
    while g.statements > 0 {
        g.top_statement();
    }
    g.out
}

/// A callable a call can be built from: its receiver, class, name and parameter types.
type CallOption = (Option<String>, Option<usize>, String, Vec<Ty>);

impl Gen<'_> {
    fn line(&mut self, text: &str) {
        if !self.line_start {
            self.out.push('\n');
        }
        for _ in 0..self.depth.min(40) {
            self.out.push_str("  ");
        }
        self.out.push_str(text);
        self.out.push('\n');
        self.line_start = true;
    }

    fn fresh(&mut self, prefix: &str) -> String {
        self.names += 1;
        format!("{prefix}{}", self.names)
    }

    fn wrong(&mut self) -> bool {
        self.error_rate > 0 && self.rng.chance(self.error_rate)
    }

    fn declare(&mut self, name: &str, ty: Ty, mutable: bool) {
        self.scopes.last_mut().expect("a scope").push(Var {
            name: name.to_string(),
            ty,
            mutable,
        });
    }

    /// Visible variables (innermost last; shadowed ones are skipped by name lookups).
    fn visible(&self) -> Vec<&Var> {
        let mut seen = std::collections::HashSet::new();
        let mut v = Vec::new();
        for scope in self.scopes.iter().rev() {
            for var in scope.iter().rev() {
                if seen.insert(var.name.as_str()) {
                    v.push(var);
                }
            }
        }
        v
    }

    fn vars_of(&self, ty: &Ty, mutable_only: bool) -> Vec<String> {
        self.visible()
            .into_iter()
            .filter(|v| &v.ty == ty && (v.mutable || !mutable_only))
            .map(|v| v.name.clone())
            .collect()
    }

    fn frame(&self) -> &Frame {
        self.frames.last().expect("a frame")
    }

    /// Fields of class `k`, inherited ones included.
    fn fields(&self, k: usize) -> Vec<(String, Ty)> {
        let mut v = self.classes[k].fields.clone();
        if let Some(p) = self.classes[k].parent {
            v.extend(self.fields(p));
        }
        v
    }

    /// Methods of class `k`, overriding ones first.
    fn methods(&self, k: usize) -> Vec<Method> {
        let mut v = self.classes[k].methods.clone();
        if let Some(p) = self.classes[k].parent {
            for m in self.methods(p) {
                if !v.iter().any(|o| o.name == m.name) {
                    v.push(m);
                }
            }
        }
        v
    }

    /// Classes whose instances can be made here: all of them, but inside the initializer of
    /// class `k` only the ones declared before it (no initializer recursion).
    fn constructible(&self) -> usize {
        match self.frame() {
            Frame {
                class: Some(k),
                init: true,
                ..
            } => *k,
            _ => self.classes.len(),
        }
    }

    /// A type to declare a variable or parameter of.
    fn any_type(&mut self) -> Ty {
        let mut options = vec![Ty::Num, Ty::Num, Ty::Str, Ty::Str, Ty::Bool, Ty::Nil];
        for k in 0..self.constructible() {
            options.push(Ty::Inst(k));
        }
        for v in self.visible() {
            if matches!(v.ty, Ty::Fun(..)) {
                options.push(v.ty.clone());
            }
        }
        self.rng.pick(&options).clone()
    }

    fn scalar_type(&mut self) -> Ty {
        self.rng
            .pick(&[Ty::Num, Ty::Num, Ty::Str, Ty::Bool, Ty::Nil])
            .clone()
    }

    fn default_of(ty: &Ty) -> &'static str {
        match ty {
            Ty::Num => "0",
            Ty::Str => "\"\"",
            Ty::Bool => "false",
            _ => "nil",
        }
    }

    // ----- expressions -----

    fn expr(&mut self, ty: &Ty, depth: usize) -> String {
        if self.wrong() {
            return self.wrong_expr(ty, depth);
        }
        let leaf = depth == 0 || self.rng.chance(350);
        // A variable of the type, often.
        let vars = self.vars_of(ty, false);
        if !vars.is_empty() && (leaf || self.rng.chance(300)) {
            return self.rng.pick(&vars).clone();
        }
        let d = depth.saturating_sub(1);
        if !leaf && self.rng.chance(150) {
            if let Some(e) = self.call_returning(ty, d) {
                return e;
            }
        }
        if !leaf && self.rng.chance(150) {
            if let Some(e) = self.field_of(ty, d) {
                return e;
            }
        }
        match ty {
            Ty::Num => match if leaf { 0 } else { self.rng.below(6) } {
                0 => self.number(),
                1 => format!("-{}", self.expr(ty, d)),
                2 => format!("({})", self.expr(ty, d)),
                3 if self.rng.chance(50) => "clock()".to_string(),
                _ => {
                    let op = self.rng.pick(&["+", "-", "*", "/", "+", "-"]);
                    format!("({} {op} {})", self.expr(ty, d), self.expr(ty, d))
                }
            },
            Ty::Str => match if leaf { 0 } else { self.rng.below(3) } {
                0 => self.string(),
                _ => format!("({} + {})", self.expr(ty, d), self.expr(ty, d)),
            },
            Ty::Bool => match if leaf { 0 } else { self.rng.below(6) } {
                0 => self.rng.pick(&["true", "false"]).to_string(),
                1 => format!("!{}", self.expr(ty, d)),
                2 => {
                    let op = self.rng.pick(&["<", "<=", ">", ">="]);
                    format!(
                        "({} {op} {})",
                        self.expr(&Ty::Num, d),
                        self.expr(&Ty::Num, d)
                    )
                }
                3 => {
                    let op = self.rng.pick(&["==", "!="]);
                    let (a, b) = (self.any_type(), self.any_type());
                    format!("({} {op} {})", self.expr(&a, d), self.expr(&b, d))
                }
                _ => {
                    let op = self.rng.pick(&["and", "or"]);
                    format!("({} {op} {})", self.expr(ty, d), self.expr(ty, d))
                }
            },
            Ty::Nil => "nil".to_string(),
            Ty::Inst(k) => {
                let k = *k;
                if let Frame {
                    class: Some(c),
                    init: false,
                    ..
                } = self.frame()
                {
                    if *c == k && self.rng.chance(300) {
                        return "this".to_string();
                    }
                }
                if k < self.constructible() {
                    let params = self.classes[k].init.clone();
                    let args = self.args(&params, d);
                    format!("{}({args})", self.classes[k].name)
                } else {
                    "nil".to_string()
                }
            }
            Ty::Fun(params, ret) => {
                // A bound method of that signature, if an instance has one.
                for k in 0..self.constructible() {
                    for m in self.methods(k) {
                        if &m.params == params && m.ret == **ret && self.rng.chance(500) {
                            let obj = self.expr(&Ty::Inst(k), d);
                            return format!("{obj}.{}", m.name);
                        }
                    }
                }
                "nil".to_string()
            }
        }
    }

    /// An expression that is wrong for `ty`: another type, an undefined name or property, a
    /// call with the wrong arity. A runtime error if evaluated (or harmless, where Lox allows
    /// it: `==`, `print`, truthiness).
    fn wrong_expr(&mut self, ty: &Ty, depth: usize) -> String {
        let d = depth.saturating_sub(1);
        match self.rng.below(6) {
            0 => self.fresh("undefined"),
            1 => {
                let k = self.rng.index(self.classes.len().max(1));
                if k < self.constructible() {
                    let params = self.classes[k].init.clone();
                    let args = self.args(&params, d);
                    format!("{}({args}).missing{}", self.classes[k].name, self.names)
                } else {
                    "nil.field".to_string()
                }
            }
            2 => {
                let funs: Vec<(String, Vec<Ty>)> = self
                    .visible()
                    .into_iter()
                    .filter_map(|v| match &v.ty {
                        Ty::Fun(p, _) => Some((v.name.clone(), p.clone())),
                        _ => None,
                    })
                    .collect();
                if funs.is_empty() {
                    return format!("{}()", self.expr(&Ty::Num, d));
                }
                let (name, params) = self.rng.pick(&funs).clone();
                let mut p = params;
                p.push(Ty::Num);
                let args = self.args(&p, d);
                format!("{name}({args})")
            }
            _ => {
                let mut other = self.any_type();
                if &other == ty {
                    other = if *ty == Ty::Str { Ty::Num } else { Ty::Str };
                }
                let saved = self.error_rate;
                self.error_rate = 0;
                let e = self.expr(&other, d);
                self.error_rate = saved;
                e
            }
        }
    }

    fn args(&mut self, params: &[Ty], depth: usize) -> String {
        let args: Vec<String> = params.iter().map(|t| self.expr(t, depth)).collect();
        args.join(", ")
    }

    /// A call of a function, method or bound method returning `ty`, if one is visible.
    fn call_returning(&mut self, ty: &Ty, depth: usize) -> Option<String> {
        let mut options: Vec<CallOption> = Vec::new();
        for v in self.visible() {
            if let Ty::Fun(p, r) = &v.ty {
                if **r == *ty {
                    options.push((Some(v.name.clone()), None, String::new(), p.clone()));
                }
            }
        }
        for k in 0..self.constructible() {
            for m in self.methods(k) {
                if m.ret == *ty {
                    options.push((None, Some(k), m.name.clone(), m.params.clone()));
                }
            }
        }
        if options.is_empty() {
            return None;
        }
        let (var, class, method, params) = self.rng.pick(&options).clone();
        let args = self.args(&params, depth);
        Some(match (var, class) {
            (Some(name), _) => format!("{name}({args})"),
            (None, Some(k)) => {
                let obj = self.expr(&Ty::Inst(k), depth);
                format!("{obj}.{method}({args})")
            }
            _ => unreachable!(),
        })
    }

    /// A field read of type `ty`, if some class has one.
    fn field_of(&mut self, ty: &Ty, depth: usize) -> Option<String> {
        let mut options = Vec::new();
        for k in 0..self.constructible() {
            for (f, t) in self.fields(k) {
                if t == *ty {
                    options.push((k, f));
                }
            }
        }
        if options.is_empty() {
            return None;
        }
        let (k, f) = self.rng.pick(&options).clone();
        let obj = self.expr(&Ty::Inst(k), depth);
        Some(format!("{obj}.{f}"))
    }

    fn number(&mut self) -> String {
        match self.rng.below(8) {
            0 => format!("{}.{}", self.rng.below(1000), self.rng.below(100)),
            1 => self.rng.wide().to_string(),
            2 => "0".to_string(),
            _ => self.rng.below(100).to_string(),
        }
    }

    fn string(&mut self) -> String {
        const PIECES: &[&str] = &[
            "a",
            "b",
            "xyz",
            " ",
            "",
            "\u{e9}",
            "\u{df}",
            "\u{1F600}",
            "init",
            "this",
            "\n",
            "{",
            "(",
            "//",
            "0",
        ];
        let mut s = String::from("\"");
        for _ in 0..self.rng.below(5) {
            let piece: &&str = self.rng.pick(PIECES);
            s.push_str(piece);
        }
        s.push('"');
        s
    }

    // ----- statements -----

    fn top_statement(&mut self) {
        if self.rng.chance(120) && self.classes.len() < 8 {
            self.class_decl();
        } else {
            self.statement();
        }
    }

    fn statement(&mut self) {
        self.statements = self.statements.saturating_sub(1);
        if self.wrong() && self.rng.chance(300) {
            self.compile_error();
            return;
        }
        let deep = self.depth < 4;
        match self.rng.below(if deep { 20 } else { 9 }) {
            0..=2 => self.var_decl(),
            3 | 4 => self.assign(),
            5 | 6 if !self.classes.is_empty() && self.rng.chance(100) => {
                let k = self.rng.index(self.classes.len());
                let text = format!("print {};", self.classes[k].name);
                self.line(&text);
            }
            5 | 6 => {
                let ty = self.any_type();
                let e = self.expr(&ty, 3);
                self.line(&format!("print {e};"));
            }
            7 => self.call_statement(),
            8 => self.field_assign(),
            9 => self.if_stmt(),
            10 => self.for_loop(),
            11 => self.while_loop(),
            12 => self.block(),
            13 | 14 => self.fun_decl(),
            15 => self.closure_maker(),
            // Only at top level: inside a loop or a function it could run many times.
            16 if self.frames.len() == 1 && self.depth == 0 => self.strings_doubled(),
            16 => self.var_decl(),
            17 => self.garbage_loop(),
            18 => self.deep_nesting(),
            _ => self.early_return(),
        }
    }

    fn var_decl(&mut self) {
        let ty = self.any_type();
        let e = self.expr(&ty, 3);
        let name = self.fresh("v");
        self.line(&format!("var {name} = {e};"));
        self.declare(&name, ty, true);
    }

    fn assign(&mut self) {
        let ty = self.any_type();
        let vars = self.vars_of(&ty, true);
        if vars.is_empty() {
            return self.var_decl();
        }
        let name = self.rng.pick(&vars).clone();
        let e = self.expr(&ty, 3);
        self.line(&format!("{name} = {e};"));
    }

    fn call_statement(&mut self) {
        let ty = self.scalar_type();
        match self.call_returning(&ty, 2) {
            Some(call) => self.line(&format!("{call};")),
            None => self.var_decl(),
        }
    }

    fn field_assign(&mut self) {
        let n = self.constructible();
        if n == 0 {
            return self.var_decl();
        }
        let k = self.rng.index(n);
        let fields = self.fields(k);
        if fields.is_empty() {
            return self.var_decl();
        }
        let (f, t) = self.rng.pick(&fields).clone();
        let obj = self.expr(&Ty::Inst(k), 2);
        let e = self.expr(&t, 2);
        self.line(&format!("{obj}.{f} = {e};"));
    }

    /// `{ statements }` in a new scope.
    fn body(&mut self, statements: usize) {
        self.depth += 1;
        self.scopes.push(Vec::new());
        for _ in 0..statements {
            if self.statements == 0 {
                break;
            }
            self.statement();
        }
        self.scopes.pop();
        self.depth -= 1;
    }

    fn block(&mut self) {
        self.line("{");
        let n = self.rng.range(1, 5) as usize;
        self.body(n);
        self.line("}");
    }

    fn if_stmt(&mut self) {
        let c = self.expr(&Ty::Bool, 3);
        self.line(&format!("if ({c}) {{"));
        let n = self.rng.range(1, 4) as usize;
        self.body(n);
        if self.rng.chance(500) {
            self.line("} else {");
            let n = self.rng.range(1, 4) as usize;
            self.body(n);
        }
        self.line("}");
    }

    fn for_loop(&mut self) {
        let i = self.fresh("i");
        let bound = self.rng.range(0, 12);
        self.line(&format!(
            "for (var {i} = 0; {i} < {bound} and (fuel = fuel - 1) > 0; {i} = {i} + 1) {{"
        ));
        self.scopes.push(Vec::new());
        self.declare(&i, Ty::Num, false);
        let n = self.rng.range(1, 4) as usize;
        self.body(n);
        self.scopes.pop();
        self.line("}");
    }

    fn while_loop(&mut self) {
        let w = self.fresh("w");
        let bound = self.rng.range(0, 12);
        self.line(&format!("var {w} = 0;"));
        self.declare(&w, Ty::Num, false);
        self.line(&format!(
            "while ({w} < {bound} and (fuel = fuel - 1) > 0) {{"
        ));
        self.depth += 1;
        self.scopes.push(Vec::new());
        let n = self.rng.range(1, 4) as usize;
        for _ in 0..n {
            if self.statements == 0 {
                break;
            }
            self.statement();
        }
        self.scopes.pop();
        self.line(&format!("{w} = {w} + 1;"));
        self.depth -= 1;
        self.line("}");
    }

    /// A function declaration: typed parameters, a fuel check, a body, a final return.
    fn fun_decl(&mut self) {
        let name = self.fresh("f");
        let params: Vec<Ty> = (0..self.rng.below(4)).map(|_| self.any_type()).collect();
        let ret = self.scalar_type();
        let ty = Ty::Fun(params.clone(), Box::new(ret.clone()));
        // Declared before its body: it may call itself.
        self.declare(&name, ty, false);
        self.function(&name, &params, ret, None, false);
    }

    /// `fun name(params) { fuel check; body; return expr; }` (a method without `fun`).
    fn function(&mut self, name: &str, params: &[Ty], ret: Ty, class: Option<usize>, init: bool) {
        let pnames: Vec<String> = params.iter().map(|_| self.fresh("p")).collect();
        let keyword = if class.is_some() { "" } else { "fun " };
        self.line(&format!("{keyword}{name}({}) {{", pnames.join(", ")));
        self.frames.push(Frame {
            ret: Some(ret.clone()),
            class,
            init,
        });
        self.depth += 1;
        self.scopes.push(Vec::new());
        for (p, t) in pnames.iter().zip(params) {
            self.declare(p, t.clone(), true);
        }
        if init {
            self.line("fuel = fuel - 1;");
        } else {
            let d = Self::default_of(&ret);
            self.line(&format!("fuel = fuel - 1; if (fuel < 0) return {d};"));
        }
        let n = self.rng.range(1, 6) as usize;
        for _ in 0..n {
            if self.statements == 0 {
                break;
            }
            self.statement();
        }
        if !init {
            let e = self.expr(&ret, 3);
            self.line(&format!("return {e};"));
        }
        self.scopes.pop();
        self.depth -= 1;
        self.frames.pop();
        self.line("}");
    }

    /// A function that declares a counter and a closure updating it, and returns the
    /// closure; then calls of what it returns.
    fn closure_maker(&mut self) {
        let maker = self.fresh("mk");
        let inner = self.fresh("inner");
        let count = self.fresh("c");
        let step = self.fresh("p");
        let closure = Ty::Fun(vec![Ty::Num], Box::new(Ty::Num));
        self.line(&format!("fun {maker}() {{"));
        self.depth += 1;
        let start = self.number();
        self.line(&format!("var {count} = {start};"));
        self.line(&format!(
            "fun {inner}({step}) {{ {count} = {count} + {step}; return {count}; }}"
        ));
        self.line(&format!("return {inner};"));
        self.depth -= 1;
        self.line("}");
        let made = self.fresh("v");
        self.line(&format!("var {made} = {maker}();"));
        self.declare(&made, closure, true);
        for _ in 0..self.rng.range(1, 3) {
            let n = self.number();
            self.line(&format!("print {made}({n});"));
        }
    }

    /// A string doubled in a loop: up to megabytes, past a small heap's limit now and then.
    fn strings_doubled(&mut self) {
        let s = self.fresh("v");
        let i = self.fresh("i");
        let times = self.rng.range(1, 23);
        let seed = self.string();
        self.line(&format!("var {s} = {seed} + \"ab\";"));
        self.line(&format!(
            "for (var {i} = 0; {i} < {times}; {i} = {i} + 1) {{ {s} = {s} + {s}; }}"
        ));
        self.line(&format!("print {s} == {s} + \"\";"));
        // Only a string of a few KiB joins the later expressions: fuel bounds iterations, not
        // bytes, and a loop concatenating a 128 KiB string a thousand times allocated 4 GiB in
        // an 8 MiB heap (66,000 cycles, 25-31 s in every collecting mode, past the case
        // timeout on a loaded machine). The doubling above still reaches megabytes.
        if times <= MAX_SHARED_DOUBLINGS {
            self.declare(&s, Ty::Str, true);
        }
    }

    /// Many short-lived objects, so that small heaps collect.
    fn garbage_loop(&mut self) {
        let i = self.fresh("i");
        let g = self.fresh("g");
        let times = self.rng.range(10, 3000);
        self.line(&format!(
            "for (var {i} = 0; {i} < {times} and (fuel = fuel - 1) > 0; {i} = {i} + 1) {{"
        ));
        self.depth += 1;
        self.scopes.push(vec![Var {
            name: i.clone(),
            ty: Ty::Num,
            mutable: false,
        }]);
        let ty = if self.constructible() > 0 && self.rng.chance(600) {
            Ty::Inst(self.rng.index(self.constructible()))
        } else {
            Ty::Str
        };
        let e = if ty == Ty::Str {
            format!("\"garbage\" + \"{}\"", self.rng.below(10))
        } else {
            self.expr(&ty, 1)
        };
        self.line(&format!("var {g} = {e};"));
        self.scopes.pop();
        self.depth -= 1;
        self.line("}");
    }

    /// Blocks or parentheses nested deep: up to past the compiler's limit (256 levels), where
    /// the program must fail to compile with "Too much nesting.".
    fn deep_nesting(&mut self) {
        let levels = if self.rng.chance(60) {
            300
        } else {
            *self.rng.pick(&[8, 30, 60, 120, 200]) as usize
        };
        if self.rng.chance(500) {
            let e = format!("{}1{}", "(".repeat(levels), ")".repeat(levels));
            self.line(&format!("print {e};"));
        } else {
            let v = self.fresh("v");
            let text = format!(
                "{} var {v} = 1; print {v}; {}",
                "{".repeat(levels),
                "}".repeat(levels)
            );
            self.line(&text);
        }
    }

    /// An early `return` inside a function (in an `if`), or another statement at top level.
    fn early_return(&mut self) {
        let frame = self.frame().clone();
        match frame.ret {
            Some(_) if frame.init => {
                let c = self.expr(&Ty::Bool, 2);
                self.line(&format!("if ({c}) return;"));
            }
            Some(ret) => {
                let c = self.expr(&Ty::Bool, 2);
                let e = self.expr(&ret, 2);
                self.line(&format!("if ({c}) return {e};"));
            }
            None => self.var_decl(),
        }
    }

    /// A class: an initializer setting typed fields (after `super.init`), methods (some
    /// overriding the parent's and calling `super`), then an instance and calls of its
    /// methods.
    fn class_decl(&mut self) {
        self.statements = self.statements.saturating_sub(1);
        let k = self.classes.len();
        let name = format!("C{k}");
        let parent = (k > 0 && self.rng.chance(500)).then(|| self.rng.index(k));
        let init: Vec<Ty> = (0..self.rng.below(3)).map(|_| self.scalar_type()).collect();
        self.classes.push(Class {
            name: name.clone(),
            parent,
            init: init.clone(),
            fields: Vec::new(),
            methods: Vec::new(),
        });
        match parent {
            Some(p) => self.line(&format!("class {name} < {} {{", self.classes[p].name)),
            None => self.line(&format!("class {name} {{")),
        }
        self.depth += 1;
        // The initializer.
        let pnames: Vec<String> = init.iter().map(|_| self.fresh("p")).collect();
        self.line(&format!("init({}) {{", pnames.join(", ")));
        self.frames.push(Frame {
            ret: None,
            class: Some(k),
            init: true,
        });
        self.depth += 1;
        self.scopes.push(Vec::new());
        for (p, t) in pnames.iter().zip(&init) {
            self.declare(p, t.clone(), true);
        }
        self.line("fuel = fuel - 1;");
        if let Some(p) = parent {
            let params = self.classes[p].init.clone();
            let args = self.args(&params, 2);
            self.line(&format!("super.init({args});"));
        }
        let mut fields = Vec::new();
        for _ in 0..self.rng.range(0, 4) {
            let f = self.fresh("x");
            let t = self.any_type();
            let e = self.expr(&t, 2);
            self.line(&format!("this.{f} = {e};"));
            fields.push((f, t));
        }
        self.scopes.pop();
        self.depth -= 1;
        self.frames.pop();
        self.line("}");
        self.classes[k].fields = fields;
        // Methods: new ones, and overrides of the parent's that call `super`.
        let inherited = parent.map(|p| self.methods(p)).unwrap_or_default();
        for _ in 0..self.rng.range(0, 4) {
            let overriding = (!inherited.is_empty() && self.rng.chance(400))
                .then(|| self.rng.pick(&inherited).clone());
            let m = match overriding {
                Some(m) => m,
                None => Method {
                    name: self.fresh("m"),
                    params: (0..self.rng.below(3)).map(|_| self.scalar_type()).collect(),
                    ret: self.scalar_type(),
                },
            };
            if self.classes[k].methods.iter().any(|o| o.name == m.name) {
                continue;
            }
            self.method(k, &m, inherited.iter().any(|o| o.name == m.name));
            self.classes[k].methods.push(m);
        }
        self.depth -= 1;
        self.line("}");
        // An instance, and calls of its methods.
        let obj = self.fresh("v");
        let params = self.classes[k].init.clone();
        let args = self.args(&params, 2);
        self.line(&format!("var {obj} = {name}({args});"));
        self.declare(&obj, Ty::Inst(k), true);
        for m in self.methods(k) {
            if self.rng.chance(600) {
                let args = self.args(&m.params, 2);
                self.line(&format!("print {obj}.{}({args});", m.name));
            }
        }
    }

    fn method(&mut self, k: usize, m: &Method, overrides: bool) {
        let pnames: Vec<String> = m.params.iter().map(|_| self.fresh("p")).collect();
        self.line(&format!("{}({}) {{", m.name, pnames.join(", ")));
        self.frames.push(Frame {
            ret: Some(m.ret.clone()),
            class: Some(k),
            init: false,
        });
        self.depth += 1;
        self.scopes.push(Vec::new());
        for (p, t) in pnames.iter().zip(&m.params) {
            self.declare(p, t.clone(), true);
        }
        let d = Self::default_of(&m.ret);
        self.line(&format!("fuel = fuel - 1; if (fuel < 0) return {d};"));
        let n = self.rng.range(0, 4) as usize;
        for _ in 0..n {
            if self.statements == 0 {
                break;
            }
            self.statement();
        }
        let e = if overrides && self.rng.chance(600) {
            let args = self.args(&m.params, 2);
            format!("super.{}({args})", m.name)
        } else {
            self.expr(&m.ret, 3)
        };
        self.line(&format!("return {e};"));
        self.scopes.pop();
        self.depth -= 1;
        self.frames.pop();
        self.line("}");
    }

    /// A statement that must fail to compile.
    fn compile_error(&mut self) {
        let v = self.fresh("v");
        let text = match self.rng.below(10) {
            0 => "return 1;".to_string(),
            1 => "print this;".to_string(),
            2 => format!("{{ var {v} = 1; var {v} = 2; }}"),
            3 => format!("{{ var {v} = {v}; }}"),
            4 => "1 = 2;".to_string(),
            5 => "print 1".to_string(),
            6 => format!("class {v} < {v} {{}}"),
            7 => "print super.x;".to_string(),
            8 => "print \"unterminated;".to_string(),
            _ => "print @;".to_string(),
        };
        // Inside a function, `return 1;` and `this` may be fine: use a top-level-only error
        // there.
        let inside = self.frames.len() > 1;
        if inside && (text.starts_with("return") || text.contains("this")) {
            self.line("1 = 2;");
        } else {
            self.line(&text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_are_seeded_and_varied() {
        let a = program(&mut Rng::new(5));
        assert_eq!(a, program(&mut Rng::new(5)));
        assert_ne!(a, program(&mut Rng::new(6)));
        let all: String = (0..200).map(|s| program(&mut Rng::new(s))).collect();
        for word in [
            "class", "super.", "this.", "fun ", "while (", "for (", "return", "else",
        ] {
            assert!(all.contains(word), "no {word:?} in 200 programs");
        }
    }
}

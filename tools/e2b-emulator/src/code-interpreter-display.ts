/**
 * Python source of the driver's display channel: what IPython's display formatter, `display()` and the
 * matplotlib inline backend do inside the Jupyter kernel behind real E2B's code interpreter, and how the
 * code interpreter server (e2b-dev/code-interpreter `template/server/api/models/result.py`) turns each
 * `execute_result` / `display_data` into one `result` line.
 *
 * It is spliced into the driver (code-interpreter-driver.ts) after `_emit` and `_now` are defined, and
 * expects the driver to call `_begin_cell()` before a cell, `_display_last_value(value, code)` for the last
 * expression and `_flush_figures()` after the cell (also when it raised).
 */
export const codeInterpreterDisplaySource = String.raw`
import base64 as _base64, builtins as _builtins, importlib.util as _importlib_util, inspect as _inspect
import math as _math, tokenize as _tokenize, types as _types, uuid as _uuid

# (MIME type, method, accepted return types) as IPython's DisplayFormatter runs them, then the two E2B
# registers in template/startup_scripts/0002_data.py.
_FORMATTERS = (
    ("text/html", "_repr_html_", (str,)),
    ("text/markdown", "_repr_markdown_", (str,)),
    ("image/svg+xml", "_repr_svg_", (str,)),
    ("image/png", "_repr_png_", (bytes, str)),
    ("application/pdf", "_repr_pdf_", (bytes, str)),
    ("image/jpeg", "_repr_jpeg_", (bytes, str)),
    ("text/latex", "_repr_latex_", (str,)),
    ("application/json", "_repr_json_", (dict, list)),
    ("application/javascript", "_repr_javascript_", (str,)),
    ("e2b/data", "_repr_e2b_data_", (dict, str)),
    ("e2b/chart", "_repr_e2b_chart_", (dict, str)),
)

# The server's Result model: MIME type -> field; every other MIME type goes to "extra".
_RESULT_FIELDS = (
    ("text/html", "html"), ("text/markdown", "markdown"), ("image/svg+xml", "svg"), ("image/png", "png"),
    ("image/jpeg", "jpeg"), ("application/pdf", "pdf"), ("text/latex", "latex"), ("application/json", "json"),
    ("application/javascript", "javascript"), ("e2b/data", "data"), ("e2b/chart", "chart"),
)

_cell = {"errored": False}


def _begin_cell():
    _cell["errored"] = False


def _report_error(error, tb):
    # Like ipykernel's showtraceback (an "error" message on iopub); the server keeps only the first of a cell.
    if _cell["errored"]:
        return
    _cell["errored"] = True
    sys.stdout.flush()
    sys.stderr.flush()
    _emit({
        "type": "error",
        "name": type(error).__name__,
        "value": str(error),
        "traceback": "".join(traceback.format_exception(type(error), error, tb)),
    })


def _json_default(value):
    # jupyter_client.jsonutil.json_default: how the kernel's messages encode what JSON has no type for.
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=datetime.timezone.utc)
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, (list, tuple, set, frozenset, _types.GeneratorType)):
        return list(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    raise TypeError("%r is not JSON serializable" % (value,))


def _real_method(value, name):
    # IPython's get_real_method: objects that claim every attribute and unbound methods of classes don't count.
    try:
        if getattr(value, "_ipython_canary_method_should_not_exist_", None) is not None:
            return None
        method = getattr(value, name, None)
    except Exception:
        return None
    if _inspect.isclass(value) and not isinstance(method, _types.MethodType):
        return None
    return method if callable(method) else None


def _type_name(kind):
    module = getattr(kind, "__module__", None)
    name = getattr(kind, "__qualname__", None)
    if not isinstance(name, str):
        name = kind.__name__
    if not module or module in ("builtins", "__builtin__", "exceptions"):
        return name
    return module + "." + name


def _plain_text(value):
    # IPython's pretty printer for the cases where it differs from repr(): classes, functions and objects
    # with object's own __repr__. Everything else is repr() (long containers are not wrapped as IPython does).
    kind = type(value)
    if isinstance(value, type) and [m for m in type(value).__mro__ if "__repr__" in vars(m)][:1] == [type]:
        return _type_name(value)
    if isinstance(value, (_types.FunctionType, _types.BuiltinFunctionType)):
        name = _type_name(value) if getattr(value, "__module__", None) else value.__name__
        try:
            return "<function %s%s>" % (name, _inspect.signature(value))
        except (TypeError, ValueError):
            return "<function %s>" % name
    if getattr(kind, "__repr__", None) is object.__repr__:
        return "<%s at 0x%x>" % (_type_name(kind), id(value))
    return repr(value)


def _orjson_like(value):
    # E2B's JSON formatter serialises every list and dict with orjson (non-str keys allowed); a TypeError
    # means "no application/json", as there.
    if isinstance(value, dict):
        converted = {}
        for key, item in value.items():
            if isinstance(key, str):
                name = key
            elif isinstance(key, bool):
                name = "true" if key else "false"
            elif key is None:
                name = "null"
            elif isinstance(key, (int, float)):
                name = str(key)
            elif isinstance(key, (datetime.datetime, datetime.date, datetime.time)):
                name = key.isoformat()
            else:
                raise TypeError("dict key must be str")
            converted[name] = _orjson_like(item)
        return converted
    if isinstance(value, (list, tuple)):
        return [_orjson_like(item) for item in value]
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, int):
        if not -(2 ** 63) <= value < 2 ** 64:
            raise TypeError("Integer exceeds 64-bit range")
        return int(value)
    if isinstance(value, float):
        return float(value) if _math.isfinite(value) else None
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    raise TypeError("Type is not JSON serializable: " + type(value).__name__)


def _is_figure(value):
    figure_module = sys.modules.get("matplotlib.figure")
    return figure_module is not None and isinstance(value, figure_module.Figure)


def _figure_png(figure):
    # IPython's pylabtools.print_figure as the inline backend calls it (bbox_inches="tight"); an empty
    # figure gives nothing, so it is shown as text only.
    if not figure.axes and not figure.lines:
        return None
    buffer = io.BytesIO()
    figure.canvas.print_figure(buffer, format="png", bbox_inches="tight", facecolor=figure.get_facecolor(), edgecolor=figure.get_edgecolor(), dpi=figure.dpi)
    return buffer.getvalue()


def _dataframe_data(value):
    # E2B's e2b/data formatter: a pandas DataFrame (only if pandas is already imported) as lists by column.
    pandas = sys.modules.get("pandas")
    if pandas is None or not isinstance(value, pandas.DataFrame):
        return None
    data = value.to_dict(orient="list")
    for key, column in data.items():
        data[key] = [item.isoformat() if isinstance(item, pandas.Timestamp) else item for item in column]
    return data


def _type_specific(mime, value):
    # Formatters registered for a type (they win over _repr_*_ methods): returns (found, data).
    if mime == "image/png" and _is_figure(value):
        return True, _figure_png(value)
    if mime == "application/json" and isinstance(value, (list, dict)):
        try:
            return True, _orjson_like(value)
        except TypeError:
            return False, None
    if mime == "e2b/data":
        data = _dataframe_data(value)
        if data is not None:
            return True, data
    return False, None


def _checked(mime, kinds, returned, value):
    # BaseFormatter._check_return: a (data, metadata) tuple counts by its data; other types are dropped.
    if isinstance(returned, tuple) and returned and isinstance(returned[0], kinds):
        returned = returned[0]
    if returned is None or isinstance(returned, kinds):
        return returned
    sys.stderr.write("FormatterWarning: %s formatter returned invalid type %s (expected %s) for object: %s\n"
                     % (mime, type(returned), kinds, _safe_repr(value)))
    sys.stderr.flush()
    return None


def _safe_repr(value):
    try:
        return repr(value)
    except Exception:
        return "<object>"


def _call(function, *arguments, **keywords):
    # catch_format_error: a formatter that raises is reported as the cell's error and gives nothing;
    # NotImplementedError just gives nothing.
    try:
        return function(*arguments, **keywords)
    except NotImplementedError:
        return None
    except Exception as error:
        _report_error(error, error.__traceback__.tb_next)
        return None


def _format(value, include=None, exclude=None):
    # DisplayFormatter.format: the MIME bundle of one object ({} when _ipython_display_ took over).
    own_display = _real_method(value, "_ipython_display_")
    if own_display is not None:
        _call(own_display)
        return {}
    bundle = {}
    bundle_method = _real_method(value, "_repr_mimebundle_")
    if bundle_method is not None:
        returned = _call(bundle_method, include=include, exclude=exclude)
        if isinstance(returned, tuple) and returned:
            returned = returned[0]
        if isinstance(returned, dict):
            bundle = {str(mime): item for mime, item in returned.items()
                      if (not include or mime in include) and not (exclude and mime in exclude)}
    formatters = (("text/plain", None, (str,)),) + _FORMATTERS
    for mime, method_name, kinds in formatters:
        if mime in bundle or (include and mime not in include) or (exclude and mime in exclude):
            continue
        if mime == "text/plain":
            data = _call(_plain_text, value)
        else:
            found, data = _type_specific(mime, value)
            if not found:
                method = _real_method(value, method_name)
                data = _call(method) if method is not None else None
        data = _checked(mime, kinds, data, value)
        if data is not None:
            bundle[mime] = data
    return bundle


def _emit_result(bundle, is_main_result):
    # api/models/result.py: one pair of enclosing quotes is stripped from text/plain, known MIME types
    # get their field, the rest is "extra"; every field is sent (null when absent).
    data = dict(bundle)
    text = data.pop("text/plain", None)
    if text and ((text.startswith("'") and text.endswith("'")) or (text.startswith('"') and text.endswith('"'))):
        text = text[1:-1]
    message = {"type": "result", "text": text}
    for mime, field in _RESULT_FIELDS:
        message[field] = data.pop(mime, None)
    message["extra"] = data
    message["is_main_result"] = is_main_result
    try:
        line = json.dumps(message, default=_json_default, allow_nan=False)
    except (TypeError, ValueError) as error:
        sys.stderr.write("the result could not be serialised: %s\n" % error)
        sys.stderr.flush()
        return
    sys.stdout.flush()
    sys.stderr.flush()
    with _lock:
        _protocol.write(line + "\n")
        _protocol.flush()


class DisplayHandle(object):
    """IPython's DisplayHandle (display(..., display_id=...)). Updates are update_display_data messages,
    which the real server does not forward, so update() shows nothing."""

    def __init__(self, display_id=None):
        self.display_id = display_id or _uuid.uuid4().hex

    def __repr__(self):
        return "<%s display_id=%s>" % (self.__class__.__name__, self.display_id)

    def display(self, obj, **keywords):
        display(obj, display_id=self.display_id, **keywords)

    def update(self, obj, **keywords):
        display(obj, display_id=self.display_id, update=True, **keywords)


def display(*objs, include=None, exclude=None, metadata=None, transient=None, display_id=None, raw=False, clear=False, **keywords):
    """Display a Python object in all frontends (IPython.display.display): one display_data result per
    object, in order; with raw=True each object is already a MIME bundle."""
    if display_id is True:
        display_id = _uuid.uuid4().hex
    if keywords.get("update"):
        if not display_id:
            raise TypeError("display_id required for update_display")
        return None
    if not objs and display_id:
        objs, raw = ({},), True
    for obj in objs:
        bundle = dict(obj) if raw else _format(obj, include=include, exclude=exclude)
        if raw or bundle:
            _emit_result(bundle, False)
    if display_id:
        return DisplayHandle(display_id)
    return None


def _ends_with_semicolon(code):
    # DisplayHook.semicolon_at_end_of_expression: "value;" shows nothing.
    try:
        tokens = list(_tokenize.generate_tokens(io.StringIO(code).readline))
    except (_tokenize.TokenError, SyntaxError):
        return False
    for token in reversed(tokens):
        if token[0] in (_tokenize.ENDMARKER, _tokenize.NL, _tokenize.NEWLINE, _tokenize.COMMENT,
                        _tokenize.INDENT, _tokenize.DEDENT):
            continue
        return token[0] == _tokenize.OP and token[1] == ";"
    return False


def _display_last_value(value, code, namespace):
    # The displayhook: execute_result (is_main_result) for a value that is not None, unless the cell ends in ";".
    if value is None or _ends_with_semicolon(code):
        return
    namespace["_"] = value
    bundle = _format(value)
    if bundle:
        _emit_result(bundle, True)


def _flush_figures():
    # matplotlib_inline's flush_figures (post_execute): every open pyplot figure is displayed, then closed.
    helpers = sys.modules.get("matplotlib._pylab_helpers")
    if helpers is None:
        return
    try:
        figures = [manager.canvas.figure for manager in helpers.Gcf.get_all_fig_managers()]
        for figure in figures:
            display(figure)
    finally:
        pyplot = sys.modules.get("matplotlib.pyplot")
        if pyplot is not None:
            pyplot.close("all")


_INLINE_BACKEND = "_e2b_emulator_inline_backend"


class _InlineBackend(object):
    # The kernel runs matplotlib with the inline backend (plt.show() displays and closes the open figures).
    # Instead of MPLBACKEND in the environment (which subprocesses would inherit), matplotlib gets the
    # backend right after it is imported, unless MPLBACKEND was set; the backend module exists only here.
    _finding = False

    def find_spec(self, name, path=None, target=None):
        if name == _INLINE_BACKEND:
            return _importlib_util.spec_from_loader(name, self)
        if name != "matplotlib" or self._finding:
            return None
        self._finding = True
        try:
            spec = _importlib_util.find_spec(name)
        finally:
            self._finding = False
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        load = spec.loader.exec_module

        def exec_module(module):
            load(module)
            if "MPLBACKEND" not in os.environ:
                try:
                    module.rcParams["backend"] = "module://" + _INLINE_BACKEND
                except Exception:
                    pass

        spec.loader.exec_module = exec_module
        return spec

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        from matplotlib.backend_bases import FigureManagerBase
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        def show(*arguments, **keywords):
            _flush_figures()

        module.FigureCanvas = FigureCanvasAgg
        module.FigureManager = FigureManagerBase
        module.show = show


sys.meta_path.insert(0, _InlineBackend())
# IPython makes display() a builtin.
_builtins.display = display
`;

/** Python sources are bundled as text (tsup `loader: { ".py": "text" }`). */
declare module "*.py" {
  const source: string;
  export default source;
}

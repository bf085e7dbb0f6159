// Regenerates models.json (the built-in catalog embedded by runtime/src/ai/catalog.rs) from an
// installed pi-ai package:
//   node runtime/data/generate_models.mjs /path/to/node_modules/@mariozechner/pi-ai > runtime/data/models.json
// Providers share their api and baseUrl; a model lists them only when it differs. Azure's models have no
// baseUrl: it comes from AZURE_OPENAI_BASE_URL / AZURE_OPENAI_RESOURCE_NAME (or models.json) when used.
const piAi = process.argv[2];
if (!piAi) {
  console.error("usage: node generate_models.mjs <path to @mariozechner/pi-ai>");
  process.exit(2);
}
const { MODELS } = await import(`${piAi}/dist/models.generated.js`);
const providers = [
  "amazon-bedrock",
  "anthropic",
  "azure-openai-responses",
  "cerebras",
  "deepseek",
  "github-copilot",
  "google",
  "google-vertex",
  "groq",
  "mistral",
  "openai",
  "openai-codex",
  "openrouter",
  "xai",
];
const blocks = [];
for (const provider of providers) {
  const models = Object.values(MODELS[provider]);
  const head = { provider, api: models[0].api, baseUrl: models[0].baseUrl };
  const lines = models.map((model) => {
    const entry = { id: model.id, name: model.name };
    if (model.api !== head.api) entry.api = model.api;
    if (model.baseUrl !== head.baseUrl) entry.baseUrl = model.baseUrl;
    Object.assign(entry, {
      reasoning: model.reasoning,
      input: model.input,
      cost: model.cost,
      contextWindow: model.contextWindow,
      maxTokens: model.maxTokens,
    });
    for (const optional of ["thinkingLevelMap", "headers", "compat"]) {
      if (model[optional]) entry[optional] = model[optional];
    }
    return `    ${JSON.stringify(entry)}`;
  });
  blocks.push(`  ${JSON.stringify(head).slice(0, -1)}, "models": [\n${lines.join(",\n")}\n  ]}`);
}
process.stdout.write(`[\n${blocks.join(",\n")}\n]\n`);

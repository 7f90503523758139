-- The editor side of tests/lsp_nvim.rs: Neovim's own LSP client starts `placid lsp`, opens
-- the file with the mistake, waits for its diagnostics, asks for hover, completion and
-- definition, and writes what it got as JSON for the test to assert on. Written for Neovim
-- 0.7 (Debian 12's), whose client has `start_client` but not yet `vim.lsp.start`.
local out = os.getenv("PLACID_LSP_OUT")
local result = {}

local function find(buf, needle, into)
  for index, line in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
    local at = string.find(line, needle, 1, true)
    if at then
      return { line = index - 1, character = at - 1 + into }
    end
  end
  error("not in the buffer: " .. needle)
end

local function request(buf, method, position)
  local params = { textDocument = { uri = vim.uri_from_bufnr(buf) }, position = position }
  local responses, err = vim.lsp.buf_request_sync(buf, method, params, 20000)
  if not responses then
    error(method .. ": " .. tostring(err))
  end
  for _, response in pairs(responses) do
    if response.error then
      error(method .. ": " .. vim.inspect(response.error))
    end
    return response.result
  end
end

local ok, err = pcall(function()
  vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("PLACID_FILE")))
  local buf = vim.api.nvim_get_current_buf()
  local cmd = { os.getenv("PLACID_BIN"), "lsp" }
  local id
  if vim.lsp.start then
    id = vim.lsp.start({ name = "placid", cmd = cmd, root_dir = os.getenv("PLACID_ROOT") })
  else
    id = vim.lsp.start_client({ name = "placid", cmd = cmd, root_dir = os.getenv("PLACID_ROOT") })
    vim.lsp.buf_attach_client(buf, id)
  end
  if not id then
    error("the client did not start")
  end
  local arrived = vim.wait(60000, function() return #vim.diagnostic.get(buf) > 0 end, 50)
  result.diagnostics = {}
  for _, diagnostic in ipairs(vim.diagnostic.get(buf)) do
    local lsp = diagnostic.user_data and diagnostic.user_data.lsp or {}
    table.insert(result.diagnostics, {
      code = lsp.code or diagnostic.code,
      message = diagnostic.message,
      line = diagnostic.lnum,
      severity = diagnostic.severity,
    })
  end
  result.arrived = arrived
  result.hover = request(buf, "textDocument/hover", find(buf, 'pool="a100"', 7))
  result.completion = request(buf, "textDocument/completion", find(buf, 'tier="glod"', 6))
  result.definition = request(buf, "textDocument/definition", find(buf, 'pool="a100" gpus', 7))
end)
if not ok then
  result.error = tostring(err)
end
vim.fn.writefile({ vim.fn.json_encode(result) }, out)
vim.cmd("qa!")

-- lualine component: sections = { lualine_x = { 'alisio' } }. lualine inserts text unescaped, so a literal %
-- is doubled.
return function()
  return (require('alisio').statusline():gsub('%%', '%%%%'))
end

// A new identifier for table.column, drawn by `make` until one is free. Random identifiers of the
// gateway's forms can repeat (KOCI + 8 digits: one in 90 million a draw); run inside the transaction
// that inserts it, the identifier checked free is still free when inserted.
export async function freshId(
  get: (sql: string, ...params: unknown[]) => Promise<unknown>,
  table: string,
  column: string,
  make: () => string,
): Promise<string> {
  for (let attempt = 0; attempt < 32; attempt++) {
    const id = make();
    if (!(await get(`SELECT 1 FROM ${table} WHERE ${column} = ?`, id))) return id;
  }
  throw new Error(`No free identifier for ${table}.${column}`);
}

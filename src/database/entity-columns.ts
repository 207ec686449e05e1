import type { DataSource, EntityTarget, ObjectLiteral } from 'typeorm';

/**
 * The column list of `entity` for a SELECT or RETURNING written in plain SQL, each column aliased to
 * its property name (`display_name AS "displayName"`): the row comes back shaped as the entity, so the
 * entity's mapping is the only one. `table` qualifies the columns (`n.slug`) when a query joins.
 */
export function entityColumns(dataSource: DataSource, entity: EntityTarget<ObjectLiteral>, table?: string): string {
  const prefix = table === undefined ? '' : `${table}.`;
  return dataSource
    .getMetadata(entity)
    .columns.map((column) => `${prefix}"${column.databaseName}" AS "${column.propertyName}"`)
    .join(', ');
}

import type { DataSource, EntityMetadata, EntityTarget, ObjectLiteral } from 'typeorm';

const built = new WeakMap<EntityMetadata, string>();

/**
 * The column list of `entity` for a SELECT or RETURNING written in plain SQL, each column aliased to
 * its property name (`display_name AS "displayName"`): the row comes back shaped as the entity, so the
 * entity's mapping is the only one. Built once per entity metadata.
 */
export function entityColumns(dataSource: DataSource, entity: EntityTarget<ObjectLiteral>): string {
  const metadata = dataSource.getMetadata(entity);
  let columns = built.get(metadata);
  if (columns === undefined) {
    columns = metadata.columns.map((column) => `"${column.databaseName}" AS "${column.propertyName}"`).join(', ');
    built.set(metadata, columns);
  }
  return columns;
}

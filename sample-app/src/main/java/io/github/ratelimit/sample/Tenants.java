package io.github.ratelimit.sample;

import java.util.Optional;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Repository;

/**
 * The tenants of this API and their limits, in the application's database (H2 here, created from schema.sql and
 * data.sql at start-up).
 */
@Repository
public class Tenants {

	private final JdbcClient jdbc;

	Tenants(JdbcClient jdbc) {
		this.jdbc = jdbc;
	}

	/**
	 * Return a tenant's limit of reports per minute.
	 * @param tenant the tenant
	 * @return the limit, or empty if the tenant is not in the table
	 */
	public Optional<Long> reportsPerMinute(String tenant) {
		return this.jdbc.sql("SELECT reports_per_minute FROM tenant WHERE id = ?")
			.param(tenant)
			.query(Long.class)
			.optional();
	}

	/**
	 * Set a tenant's limit of reports per minute, adding the tenant if it is not in the table.
	 * @param tenant the tenant
	 * @param reportsPerMinute the limit
	 */
	public void setReportsPerMinute(String tenant, long reportsPerMinute) {
		this.jdbc.sql("MERGE INTO tenant (id, reports_per_minute) KEY (id) VALUES (?, ?)")
			.params(tenant, reportsPerMinute)
			.update();
	}

}

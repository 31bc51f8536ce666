package io.github.ratelimit.sample;

import io.github.ratelimit.engine.TenantLimits;
import io.github.ratelimit.engine.TenantLimitsSource;
import io.github.ratelimit.web.RateLimitPlanResolver;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * A small API whose endpoints are rate limited with {@code @RateLimited}.
 * <p>
 * {@snippet lang = "shell" :
 * java -jar sample-app/target/sample-app-0.1.0-SNAPSHOT.jar                          # counters in memory
 * java -jar sample-app/target/sample-app-0.1.0-SNAPSHOT.jar --spring.profiles.active=redis   # counters in Redis
 * }
 */
@SpringBootApplication
@EnableConfigurationProperties(SampleProperties.class)
public class SampleApplication {

	public static void main(String[] args) {
		SpringApplication.run(SampleApplication.class, args);
	}

	/**
	 * The issued API keys, as the key expressions of the keyed policies call them ({@code @apiKeys}).
	 */
	@Bean
	ApiKeys apiKeys(SampleProperties properties) {
		return new ApiKeys(properties.apiKeys());
	}

	/**
	 * The plan of a request: its API key's, if this API issued the key (sample.api-keys in application.yml); any
	 * other key and no key are on the default plan, free (ratelimit.plans).
	 */
	@Bean
	RateLimitPlanResolver planResolver(ApiKeys apiKeys) {
		return (request) -> apiKeys.plan(request.getHeader("X-API-Key"));
	}

	/**
	 * Each tenant's limit of the {@code reports} policy, from the tenants table: a tenant not in it, or another
	 * policy, has the policy's own limits.
	 */
	@Bean
	TenantLimitsSource tenantLimits(Tenants tenants) {
		return (policy, tenant) -> policy.equals("reports")
				? tenants.reportsPerMinute(tenant).map(TenantLimits::ofLimit).orElse(null) : null;
	}

}

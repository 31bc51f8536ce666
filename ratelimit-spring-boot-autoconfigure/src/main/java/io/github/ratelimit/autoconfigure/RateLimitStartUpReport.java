package io.github.ratelimit.autoconfigure;

import java.util.List;

import io.github.ratelimit.engine.PolicyCatalog;
import io.github.ratelimit.engine.PolicyCatalogSummary;
import io.github.ratelimit.engine.RateLimitedMethods;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.util.ClassUtils;

/**
 * Says once started what is rate limited (INFO: how many methods, filters and gateway routes, by how many policies),
 * or which beans' {@code @RateLimited} methods nothing limits because the auto-configuration did not apply (WARN).
 * Registered in {@code spring.factories}, so that it speaks when the auto-configuration is missing too.
 */
final class RateLimitStartUpReport implements ApplicationListener<ApplicationReadyEvent> {

	private static final Log logger = LogFactory.getLog(RateLimitStartUpReport.class);

	private static final boolean ENGINE = ClassUtils.isPresent("io.github.ratelimit.engine.PolicyCatalog",
			RateLimitStartUpReport.class.getClassLoader());

	@Override
	public void onApplicationEvent(ApplicationReadyEvent event) {
		ConfigurableApplicationContext context = event.getApplicationContext();
		if (!ENGINE || !context.getEnvironment().getProperty("ratelimit.enabled", Boolean.class, true)) {
			return;
		}
		PolicyCatalog catalog = context.getBeanProvider(PolicyCatalog.class).getIfUnique();
		List<String> beans = (catalog != null) ? List.of()
				: RateLimitedMethods.beansWithRateLimitedMethods(context.getBeanFactory());
		if (catalog != null) {
			logger.info(PolicyCatalogSummary.of(catalog));
		}
		else if (!beans.isEmpty()) {
			logger.warn("@RateLimited methods of " + String.join(", ", beans) + " are not limited: "
					+ "RateLimitAutoConfiguration did not apply. Check that it is not excluded and that the starter "
					+ "matches your Spring Boot version (--debug prints the conditions report).");
		}
	}

}

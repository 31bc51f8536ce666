package io.github.ratelimit.gateway;

import com.tngtech.archunit.core.domain.JavaClasses;
import io.github.ratelimit.architecture.LayoutRules;
import org.junit.jupiter.api.Test;

class GatewayLayoutTests {

	private final JavaClasses gateway = LayoutRules.productionClasses("io.github.ratelimit.gateway");

	@Test
	void theGatewayAdaptersDecideNothing() {
		LayoutRules.adaptersDecideNothing().check(this.gateway);
	}

	@Test
	void theGatewayAdaptersImportNoServletStackAndNoSpringBoot() {
		LayoutRules.adaptersAreIndependent("jakarta.servlet..", "org.springframework.web.servlet..",
				"io.github.ratelimit.webmvc..").check(this.gateway);
	}

}

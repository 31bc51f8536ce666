package io.github.ratelimit.gateway;

import java.util.Set;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import io.github.ratelimit.architecture.LayoutRules;
import io.github.ratelimit.webflux.RateLimitWebFilter;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

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

	/**
	 * The gateway is a WebFlux application: it builds on the WebFlux adapters, and of them uses only the exchange
	 * that the filter layer hands on, so that a request decided by the filter layer is not decided again by a route,
	 * and the return to the request's thread after a decision.
	 */
	@Test
	void ofTheWebFluxAdaptersTheGatewayUsesOnlyTheExchangeTheFilterLayerHandsOnAndTheReturnToTheRequestsThread() {
		noClasses().should().dependOnClassesThat(JavaClass.Predicates.resideInAPackage("io.github.ratelimit.webflux..")
			.and(DescribedPredicate.not(JavaClass.Predicates.type(RateLimitWebFilter.class))))
			.check(this.gateway);
		noClasses().should()
			.callCodeUnitWhere(DescribedPredicate.describe("RateLimitWebFilter other than exchangeOf, onRequestThread",
					(call) -> call.getTargetOwner().isEquivalentTo(RateLimitWebFilter.class)
							&& !Set.of("exchangeOf", "onRequestThread").contains(call.getName())))
			.check(this.gateway);
	}

	@Test
	void theGatewayAdaptersHaveNoPackageCycles() {
		LayoutRules.noPackageCycles().check(this.gateway);
	}

}

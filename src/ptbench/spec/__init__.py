"""Campaign files: pydantic models, located YAML loading, one-line errors."""

from ptbench.spec.campaign import AgentRef, Backend, BaseModelRef, Budget, Campaign, Evaluation, Strict, TaskRef
from ptbench.spec.load import load_campaign, load_campaign_located, load_model_file

__all__ = [
    "AgentRef",
    "Backend",
    "BaseModelRef",
    "Budget",
    "Campaign",
    "Evaluation",
    "Strict",
    "TaskRef",
    "load_campaign",
    "load_campaign_located",
    "load_model_file",
]
